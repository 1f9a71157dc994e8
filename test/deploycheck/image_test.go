package deploycheck

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// maxImageBytes bounds one platform's image as pushed (manifest, configuration and compressed
// layer): 12.9 MB for linux/amd64 and 11.7 MB for linux/arm64 when measured, plus about 20%.
const maxImageBytes = 15_500_000

// The image scripts/image builds without a Docker engine is the one the Dockerfile describes: both
// platforms in one index, the Dockerfile's user, entrypoint, command and ports, the files its
// final stage copies and nothing else, owned by root; a CA bundle of PEM certificates; the binary
// that ships (static, built with the Dockerfile's flags, no dev command) stamped with the version.
func TestImage(t *testing.T) {
	root := repoRoot(t)
	out := t.TempDir()
	build := exec.Command(filepath.Join(root, "scripts", "image"), "--out", out, "--version", stampedVersion)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image: %v\n%s", err, b)
	}
	p, err := layout.FromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries.Manifests) != 1 || !entries.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("the layout holds %+v, want one image index", entries.Manifests)
	}
	idx, err := top.ImageIndex(entries.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := dockerfileFinalStage(t)
	var platforms []string
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			t.Errorf("manifest %s names no platform", desc.Digest)
			continue
		}
		platform := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, platform)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.ReplaceAll(platform, "/", "-"), func(t *testing.T) {
			checkImage(t, img, *desc.Platform, want)
		})
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("the index holds %v, want linux/amd64 and linux/arm64", platforms)
	}
}

// finalStage is what the Dockerfile's last stage promises of the image.
type finalStage struct {
	user, workdir   string
	entrypoint, cmd []string
	ports           []string // as in the configuration: 8080/tcp
	files           []string // the COPY destinations, without the leading /
	ldflags         string   // of the build stage's go build, with $VERSION as stampedVersion
}

func dockerfileFinalStage(t *testing.T) finalStage {
	t.Helper()
	var s finalStage
	lines := dockerfile(t)
	if m := regexp.MustCompile(`-ldflags "([^"]*)"`).FindStringSubmatch(strings.Join(lines, "\n")); m != nil {
		s.ldflags = strings.ReplaceAll(m[1], "$VERSION", stampedVersion)
	} else {
		t.Fatal(`the Dockerfile's go build has no -ldflags "..."`)
	}
	for _, line := range lines {
		instruction, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instruction) {
		case "FROM":
			s = finalStage{ldflags: s.ldflags}
		case "USER":
			s.user = rest
		case "WORKDIR":
			s.workdir = rest
		case "EXPOSE":
			for _, port := range strings.Fields(rest) {
				if !strings.Contains(port, "/") {
					port += "/tcp"
				}
				s.ports = append(s.ports, port)
			}
		case "COPY":
			fields := strings.Fields(rest)
			s.files = append(s.files, strings.TrimPrefix(fields[len(fields)-1], "/"))
		case "ENTRYPOINT":
			s.entrypoint = execForm(t, line, rest)
		case "CMD":
			s.cmd = execForm(t, line, rest)
		}
	}
	return s
}

func execForm(t *testing.T, line, rest string) []string {
	var args []string
	if err := json.Unmarshal([]byte(rest), &args); err != nil {
		t.Fatalf("Dockerfile %q: want the exec form, a JSON array: %v", line, err)
	}
	return args
}

func checkImage(t *testing.T, img v1.Image, platform v1.Platform, want finalStage) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != platform.OS || cf.Architecture != platform.Architecture {
		t.Errorf("the configuration is for %s/%s, the index says %s/%s", cf.OS, cf.Architecture, platform.OS, platform.Architecture)
	}
	c := cf.Config
	if c.User != want.user {
		t.Errorf("user %q, the Dockerfile says %q", c.User, want.user)
	}
	if u, _, _ := strings.Cut(c.User, ":"); u == "" || u == "0" || u == "root" {
		t.Errorf("the image runs as %q, want a non-root user", c.User)
	}
	if c.WorkingDir != want.workdir {
		t.Errorf("working directory %q, the Dockerfile says %q", c.WorkingDir, want.workdir)
	}
	if !slices.Equal(c.Entrypoint, want.entrypoint) || !slices.Equal(c.Cmd, want.cmd) {
		t.Errorf("entrypoint %q and command %q, the Dockerfile says %q and %q", c.Entrypoint, c.Cmd, want.entrypoint, want.cmd)
	}
	var ports []string
	for port := range c.ExposedPorts {
		ports = append(ports, port)
	}
	slices.Sort(ports)
	if !slices.Equal(ports, want.ports) {
		t.Errorf("exposed ports %v, the Dockerfile says %v", ports, want.ports)
	}
	if v := c.Labels["org.opencontainers.image.version"]; v != stampedVersion {
		t.Errorf("label org.opencontainers.image.version is %q, want %q", v, stampedVersion)
	}
	if s := c.Labels["org.opencontainers.image.source"]; !strings.HasPrefix(s, "https://") {
		t.Errorf("label org.opencontainers.image.source is %q, want the repository's URL", s)
	}

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	manifestSize, err := img.Size()
	if err != nil {
		t.Fatal(err)
	}
	rawConfig, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	total := manifestSize + int64(len(rawConfig))
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	t.Logf("%d bytes compressed", total)
	if total > maxImageBytes {
		t.Errorf("the image is %d bytes compressed, over the bound of %d: what grew?", total, maxImageBytes)
	}

	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			// Root's, and writable by root only: user 65532 can change nothing of the image.
			if h.Uid != 0 || h.Gid != 0 || h.Mode&0o022 != 0 {
				t.Errorf("%s: owner %d:%d, mode %o; want root's, writable by its owner only", h.Name, h.Uid, h.Gid, h.Mode)
			}
			switch h.Typeflag {
			case tar.TypeDir:
			case tar.TypeReg:
				if files[h.Name], err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			default:
				t.Errorf("%s: type %c, want a file or a folder", h.Name, h.Typeflag)
			}
		}
		rc.Close()
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if wantFiles := slices.Sorted(slices.Values(want.files)); !slices.Equal(names, wantFiles) {
		t.Errorf("the image holds %v, the Dockerfile copies %v", names, wantFiles)
	}
	checkCABundle(t, files["etc/ssl/certs/ca-certificates.crt"])
	if bin := files["taskgate"]; bin != nil {
		checkShippedBinary(t, bin, platform, want.ldflags)
	}
}

func checkCABundle(t *testing.T, bundle []byte) {
	certs := 0
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Errorf("the CA bundle's certificate %d: %v", certs+1, err)
		}
		certs++
	}
	if certs == 0 {
		t.Error("the CA bundle holds no PEM certificate")
	}
}

var devCommandLine = regexp.MustCompile(`(?m)^\s+dev\s`)

// checkShippedBinary: built as the Dockerfile builds it (-trimpath, CGO_ENABLED=0, its -ldflags, no
// build tags: `-tags dev` is the development build), static, and, where it can run here, with no
// dev command and printing the stamped version.
func checkShippedBinary(t *testing.T, bin []byte, platform v1.Platform, ldflags string) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	if machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[platform.Architecture]; f.Machine != machine {
		t.Errorf("the binary is for %v, want %v", f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for key, value := range map[string]string{"-trimpath": "true", "CGO_ENABLED": "0", "GOARCH": platform.Architecture, "-tags": ""} {
		if settings[key] != value {
			t.Errorf("the binary was built with %s=%q, the Dockerfile's build has %q", key, settings[key], value)
		}
	}
	// With -trimpath the build information leaves -ldflags out: their effects are checked instead.
	for _, flag := range strings.Fields(ldflags) {
		switch flag {
		case "-s":
			if f.Section(".symtab") != nil {
				t.Error("the binary has a symbol table: it was built without -ldflags -s")
			}
		case "-w":
			for _, s := range f.Sections {
				if strings.Contains(s.Name, "debug_") {
					t.Errorf("the binary has DWARF (%s): it was built without -ldflags -w", s.Name)
				}
			}
		}
	}
	if !bytes.Contains(bin, []byte(stampedVersion)) {
		t.Errorf("the binary does not hold the version %s it was stamped with", stampedVersion)
	}
	if info.Path != "github.com/taskgate/taskgate/cmd/taskgate" {
		t.Errorf("the binary is %s, want github.com/taskgate/taskgate/cmd/taskgate", info.Path)
	}
	if runtime.GOOS != platform.OS || runtime.GOARCH != platform.Architecture {
		return
	}
	exe := filepath.Join(t.TempDir(), "taskgate")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(exe, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "taskgate "+stampedVersion+"\n") {
		t.Errorf("taskgate version: %v, printed %q; want taskgate %s", err, out, stampedVersion)
	}
	if out, err := exec.Command(exe, "help").CombinedOutput(); err != nil || devCommandLine.Match(out) {
		t.Errorf("taskgate help: %v; it must list no dev command:\n%s", err, out)
	}
	if out, err := exec.Command(exe, "dev").CombinedOutput(); err == nil || !strings.Contains(string(out), "development build only") {
		t.Errorf("taskgate dev: %v, printed %q; want the shipped binary's refusal", err, out)
	}
}
