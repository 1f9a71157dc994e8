// Command buildimage builds taskgate's container image without a Docker engine, as the Dockerfile
// describes it: on an empty base, one layer with the CA bundle and the static binary, run as user
// 65532, for each platform, in one OCI image index written as an OCI image layout.
//
//	go run ./cmd/buildimage --src ../.. --out DIR --version V [--revision SHA] [--platforms linux/amd64,linux/arm64]
//
// scripts/image runs it. It is in the deploycheck module, whose tests read the image back with the
// same library, so that go-containerregistry stays out of taskgate's go.mod. Not ko: ko adds
// files only under /var/run/ko, on a base image it pulls from a registry, and the CA bundle and
// the user would have to come from that base.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the Dockerfile's final stage says (test/deploycheck compares them).
const (
	user       = "65532:65532"
	binaryPath = "taskgate"
	caPath     = "etc/ssl/certs/ca-certificates.crt"
)

var (
	entrypoint = []string{"/taskgate"}
	cmd        = []string{"serve", "--config", "/etc/taskgate/tools.yaml", "--http", ":8080"}
	exposed    = map[string]struct{}{"8080/tcp": {}}
)

// epoch is every timestamp in the image, so that the same sources give the same digests.
var epoch = time.Unix(0, 0).UTC()

func main() {
	src := flag.String("src", "", "taskgate's repository root")
	out := flag.String("out", "", "the OCI image layout folder to write (replaced if it holds one)")
	version := flag.String("version", "", "the version stamped into the binary and its label")
	revision := flag.String("revision", "", "the source revision, for the org.opencontainers.image.revision label")
	source := flag.String("source", "https://github.com/taskgate/taskgate", "the org.opencontainers.image.source label")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated OS/ARCH")
	caBundle := flag.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "the PEM bundle of CA certificates to ship")
	flag.Parse()
	if *src == "" || *out == "" || *version == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: buildimage --src DIR --out DIR --version V [flags]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	labels := map[string]string{
		"org.opencontainers.image.version": *version,
		"org.opencontainers.image.source":  *source,
	}
	if *revision != "" {
		labels["org.opencontainers.image.revision"] = *revision
	}
	if err := build(*src, *out, *version, *caBundle, strings.Split(*platforms, ","), labels); err != nil {
		fmt.Fprintln(os.Stderr, "buildimage:", err)
		os.Exit(1)
	}
}

func build(src, out, version, caBundle string, platforms []string, labels map[string]string) error {
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return fmt.Errorf("the CA bundle: %w (--ca-bundle names another)", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, platform := range platforms {
		goos, arch, ok := strings.Cut(platform, "/")
		if !ok {
			return fmt.Errorf("platform %q: want OS/ARCH, such as linux/arm64", platform)
		}
		bin, err := goBuild(src, goos, arch, version)
		if err != nil {
			return err
		}
		img, err := image(goos, arch, ca, bin, labels)
		if err != nil {
			return fmt.Errorf("%s: %w", platform, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: arch}},
		})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	if err := clearLayout(out); err != nil {
		return err
	}
	p, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version}))
}

// goBuild builds taskgate as the Dockerfile's build stage does and returns the executable. GOFLAGS
// is cleared: the caller's (-tags dev, say) must not reach the binary that ships, and
// -buildvcs=false leaves out the revision as the Dockerfile's build context (no .git) does.
func goBuild(src, goos, arch, version string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "buildimage")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "taskgate")
	c := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", bin, "./cmd/taskgate")
	c.Dir = src
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+arch, "GOFLAGS=-buildvcs=false")
	if out, err := c.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build for %s/%s: %w\n%s", goos, arch, err, out)
	}
	return os.ReadFile(bin)
}

// image is one platform's image: the empty base, the layer, and the Dockerfile's configuration.
func image(goos, arch string, ca, bin []byte, labels map[string]string) (v1.Image, error) {
	layer, err := rootLayer(ca, bin)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS:           goos,
		Architecture: arch,
		Created:      v1.Time{Time: epoch},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:         user,
			Entrypoint:   entrypoint,
			Cmd:          cmd,
			ExposedPorts: exposed,
			Labels:       labels,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "buildimage: the CA bundle and /taskgate"},
	})
}

// rootLayer holds the CA bundle and the binary, owned by root and writable by root only, as the
// Dockerfile's COPY lines leave them.
func rootLayer(ca, bin []byte) (v1.Layer, error) {
	var raw bytes.Buffer
	gz, err := gzip.NewWriterLevel(&raw, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, e := range []struct {
		name string
		mode int64
		body []byte
	}{
		{"etc/", 0o755, nil},
		{"etc/ssl/", 0o755, nil},
		{"etc/ssl/certs/", 0o755, nil},
		{caPath, 0o644, ca},
		{binaryPath, 0o755, bin},
	} {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), ModTime: epoch, Typeflag: tar.TypeReg}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// clearLayout makes out an empty folder: it may hold an earlier image layout, nothing else.
func clearLayout(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(out, "oci-layout")); err != nil {
		return fmt.Errorf("%s holds files and no oci-layout: name an empty or new folder", out)
	}
	return os.RemoveAll(out)
}
