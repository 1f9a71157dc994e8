// Package docs holds the tests that keep the documentation true: every key of the mapping schema
// is in the mapping reference, with an example; every relative link and anchor of the Markdown
// files resolves; every taskgate command line in a fenced block parses against the real command
// line; every YAML mapping example passes taskgate validate; and nothing in the repository needs
// a file outside it.
package docs

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"
)

const root = ".."

var taskgate string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "docs-taskgate")
	if err != nil {
		panic(err)
	}
	// With the in-memory engine, which docs/adding-an-engine.md shows as the model driver.
	taskgate = filepath.Join(dir, "taskgate")
	if out, err := exec.Command("go", "build", "-tags", "memengine,dev", "-o", taskgate, "../cmd/taskgate").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// markdownFiles are the repository's Markdown files, relative to its root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d Markdown files under %s", len(files), root)
	}
	return files
}

// block is a fenced code block: its language and its lines.
type block struct {
	file, lang string
	line       int // of its first content line
	lines      []string
}

// blocks are the fenced code blocks of a Markdown file; prose is the file without them.
func blocks(t *testing.T, file string) (bs []block, prose []string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cur *block
	for i, l := range strings.Split(string(src), "\n") {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		switch {
		case fence && cur == nil:
			cur = &block{file: file, lang: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```")), line: i + 2}
			prose = append(prose, "")
		case fence:
			bs = append(bs, *cur)
			cur = nil
			prose = append(prose, "")
		case cur != nil:
			cur.lines = append(cur.lines, l)
			prose = append(prose, "")
		default:
			prose = append(prose, l)
		}
	}
	return bs, prose
}

// slug is the anchor GitHub gives a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown file's headings.
func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	_, prose := blocks(t, file)
	seen := map[string]int{}
	found := map[string]bool{}
	for _, l := range prose {
		m := regexp.MustCompile(`^#{1,6}\s+(.*)$`).FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			found[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			found[s] = true
		}
		seen[s]++
	}
	return found
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// TestLinksResolve: every relative link of every Markdown file names a file or folder of the
// repository, and every anchor a heading of its file.
func TestLinksResolve(t *testing.T) {
	checked := 0
	for _, file := range markdownFiles(t) {
		_, prose := blocks(t, file)
		for i, l := range prose {
			for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %s: no such file or folder", file, i+1, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchors(t, resolved)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", file, i+1, target, resolved, anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d relative links checked: the parser misses them", checked)
	}
}

// schemaKeys are the keys of the mapping format, as paths like engines.<name>.temporal.tls.caFile
// and tools[].ask[].key. JSON Schemas inside a mapping (inputSchema, a question's schema) are
// values, not keys of the format.
func schemaKeys(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "mapping", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(src, &s); err != nil {
		t.Fatal(err)
	}
	defs, _ := s["$defs"].(map[string]any)
	var keys []string
	var walk func(n map[string]any, path string)
	walk = func(n map[string]any, path string) {
		if ref, ok := n["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/$defs/")
			if name == "objectSchema" {
				return
			}
			if def, ok := defs[name].(map[string]any); ok {
				walk(def, path)
			}
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			list, _ := n[k].([]any)
			for _, alt := range list {
				if m, ok := alt.(map[string]any); ok {
					walk(m, path)
				}
			}
		}
		if items, ok := n["items"].(map[string]any); ok {
			walk(items, path+"[]")
		}
		if more, ok := n["additionalProperties"].(map[string]any); ok {
			keys = append(keys, path+".<name>")
			walk(more, path+".<name>")
		}
		props, _ := n["properties"].(map[string]any)
		for name, p := range props {
			key := strings.TrimPrefix(path+"."+name, ".")
			keys = append(keys, key)
			if m, ok := p.(map[string]any); ok && !(name == "schema" && strings.HasSuffix(path, "ask[]")) {
				walk(m, key)
			}
		}
	}
	walk(s, "")
	slices.Sort(keys)
	return slices.Compact(keys)
}

// exampleKeys are the keys a YAML mapping uses, as schemaKeys names them.
func exampleKeys(v any, path string, into map[string]bool) {
	switch n := v.(type) {
	case map[string]any:
		for k, child := range n {
			key := strings.TrimPrefix(path+"."+k, ".")
			if path == "engines" {
				key = "engines.<name>"
			}
			into[key] = true
			if k == "inputSchema" || k == "outputSchema" || (k == "schema" && strings.HasSuffix(path, "ask[]")) {
				continue
			}
			exampleKeys(child, key, into)
		}
	case []any:
		for _, child := range n {
			exampleKeys(child, path+"[]", into)
		}
	}
}

// mappingExamples are the YAML blocks of a file that are mappings (of engines, tools or auth).
func mappingExamples(t *testing.T, file string) []block {
	t.Helper()
	bs, _ := blocks(t, file)
	var examples []block
	for _, b := range bs {
		if b.lang != "yaml" {
			continue
		}
		var top map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(b.lines, "\n")), &top); err != nil {
			t.Errorf("%s:%d: a YAML block that does not parse: %v", b.file, b.line, err)
			continue
		}
		mapping := len(top) > 0
		for k := range top {
			mapping = mapping && slices.Contains([]string{"version", "engines", "tools", "auth"}, k)
		}
		if mapping {
			examples = append(examples, b)
		}
	}
	return examples
}

// TestMappingReference: every key of mapping/schema.json is in docs/mapping.md, written as its
// path in a code span, and used in one of its YAML examples.
func TestMappingReference(t *testing.T) {
	const reference = "mapping.md"
	src, err := os.ReadFile(reference)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, b := range mappingExamples(t, reference) {
		var v any
		if err := yaml.Unmarshal([]byte(strings.Join(b.lines, "\n")), &v); err != nil {
			t.Fatal(err)
		}
		exampleKeys(v, "", used)
	}
	keys := schemaKeys(t)
	if len(keys) < 60 {
		t.Fatalf("only %d keys in the schema: %q", len(keys), keys)
	}
	for _, k := range keys {
		if !bytes.Contains(src, []byte("`"+k+"`")) {
			t.Errorf("%s does not describe the key `%s`", reference, k)
		}
		if !used[k] {
			t.Errorf("no YAML example of %s uses the key %s", reference, k)
		}
	}
}

// TestMappingExamplesValidate: every YAML mapping in the documentation passes taskgate validate,
// with the files it names (relative to it) and the variables it names there.
func TestMappingExamplesValidate(t *testing.T) {
	publicKey := publicKeyPEM(t)
	known := map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:7233", "SFN_ENDPOINT": "http://127.0.0.1:8083",
		"TASKGATE_MCP_URL": "https://mcp.example.com/mcp", "TASKGATE_SFN_EVENTS_TOPIC_ARN": "arn:aws:sns:eu-west-1:123456789012:taskgate-sfn-events"}
	fileKey := regexp.MustCompile(`\b(?:caFile|certFile|keyFile):\s*"?([^",}\s]+)`)
	keyFiles := regexp.MustCompile(`\bkeyFiles:\s*\[([^\]]*)\]`)
	variable := regexp.MustCompile(`\b(?:apiKeyEnv|keyEnv|authTokenEnv):\s*([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	n := 0
	for _, file := range markdownFiles(t) {
		for _, b := range mappingExamples(t, file) {
			n++
			src := strings.Join(b.lines, "\n")
			dir := t.TempDir()
			write := func(name, content string) {
				if filepath.IsAbs(name) {
					t.Errorf("%s:%d: names the absolute path %s: write examples with paths relative to the mapping file", b.file, b.line, name)
					return
				}
				path := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range fileKey.FindAllStringSubmatch(src, -1) {
				write(m[1], "")
			}
			for _, m := range keyFiles.FindAllStringSubmatch(src, -1) {
				for _, f := range strings.Split(m[1], ",") {
					write(strings.TrimSpace(f), publicKey)
				}
			}
			write("tools.yaml", src)
			env := os.Environ()
			for _, m := range variable.FindAllStringSubmatch(src, -1) {
				name := m[1] + m[2]
				value, ok := known[name]
				if !ok {
					value = "a-value-of-32-characters-for-keys"
				}
				env = append(env, name+"="+value)
			}
			cmd := exec.Command(taskgate, "validate", "tools.yaml")
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s:%d: taskgate validate: %v\n%s", b.file, b.line, err, out)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d YAML mapping examples found", n)
	}
}

func publicKeyPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// TestCommandLines: every taskgate command line in a fenced block of the documentation parses
// against the real command line: its command exists, and so do its flags, with values of their
// types. Each runs with --help appended, which parses the flags and runs nothing.
func TestCommandLines(t *testing.T) {
	n := 0
	for _, file := range markdownFiles(t) {
		bs, _ := blocks(t, file)
		for _, b := range bs {
			for _, c := range commandLines(b) {
				n++
				args := append(slices.Clone(c.args), "--help")
				out, err := exec.Command(taskgate, args...).CombinedOutput()
				if err != nil {
					t.Errorf("%s:%d: taskgate %s: %v\n%s", b.file, c.line, strings.Join(c.args, " "), err, out)
					continue
				}
				// An unknown command falls back to the root's help; the usage names the command.
				if usage := usageLine(out); len(c.args) > 0 && !strings.HasPrefix(usage, "taskgate "+c.args[0]) {
					t.Errorf("%s:%d: taskgate %s: no command %q (the help's usage is %q)", b.file, c.line, strings.Join(c.args, " "), c.args[0], usage)
				}
			}
		}
	}
	if n < 30 {
		t.Fatalf("only %d taskgate command lines found", n)
	}
}

func usageLine(help []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(help))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "Usage:" && sc.Scan() {
			return strings.TrimSpace(sc.Text())
		}
	}
	return ""
}

// commandLine is one taskgate invocation of a block: its arguments after the program.
type commandLine struct {
	line int
	args []string
}

var substitution = regexp.MustCompile(`\$\(([^()]*)\)`)

// commandLines finds the taskgate invocations of a shell block, or of a terminal transcript (its
// lines that start with "$ "): lines joined where they end in a backslash, each $(...) a command
// of its own, commands split at ;, &&, || and |, redirections and comments dropped.
func commandLines(b block) []commandLine {
	if b.lang != "" && b.lang != "bash" && b.lang != "sh" && b.lang != "console" {
		return nil
	}
	transcript := slices.ContainsFunc(b.lines, func(l string) bool { return strings.HasPrefix(l, "$ ") })
	var found []commandLine
	for i := 0; i < len(b.lines); i++ {
		start, l := i, b.lines[i]
		for strings.HasSuffix(l, `\`) && i+1 < len(b.lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + b.lines[i]
		}
		if transcript {
			if !strings.HasPrefix(l, "$ ") {
				continue
			}
			l = strings.TrimPrefix(l, "$ ")
		}
		commands := []string{}
		for _, m := range substitution.FindAllStringSubmatch(l, -1) {
			commands = append(commands, m[1])
		}
		commands = append(commands, substitution.ReplaceAllString(l, "X"))
		for _, c := range commands {
			for _, words := range simpleCommands(c) {
				if args, ok := taskgateArgs(words); ok {
					found = append(found, commandLine{line: b.line + start, args: args})
				}
			}
		}
	}
	return found
}

// simpleCommands splits a shell line into words, a list of them per simple command, with quotes
// removed, variables left as they are written, redirections and comments dropped.
func simpleCommands(line string) [][]string {
	var commands [][]string
	var words []string
	var word strings.Builder
	inWord, quote, skipNext := false, rune(0), false
	end := func() {
		if inWord {
			if !skipNext {
				words = append(words, word.String())
			}
			skipNext = false
		}
		word.Reset()
		inWord = false
	}
	split := func() {
		end()
		if len(words) > 0 {
			commands = append(commands, words)
		}
		words = nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			split()
			return commands
		case r == ';' || r == '|' || r == '&':
			split()
		case r == '>' || r == '<':
			end()
			skipNext = i+1 < len(rs) && rs[i+1] != '&' // the redirection's target is no argument
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
			}
		case unicode.IsSpace(r):
			end()
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	split()
	return commands
}

// taskgateArgs are the arguments of a simple command that runs taskgate: as the command (after
// any VAR=value), as the command that `--` hands on (claude mcp add ... -- taskgate serve), or
// as the server the MCP Inspector starts.
func taskgateArgs(words []string) ([]string, bool) {
	isTaskgate := func(w string) bool { return w == "taskgate" || strings.HasSuffix(w, "/taskgate") }
	for len(words) > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0]) {
		words = words[1:]
	}
	if len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/taskgate" {
		return words[3:], true
	}
	for i, w := range words {
		if !isTaskgate(w) {
			continue
		}
		if i == 0 || words[i-1] == "--" || strings.HasSuffix(words[i-1], "/inspector") {
			return words[i+1:], true
		}
	}
	return nil, false
}

// TestReadme: the README stays a short introduction, and the scripts its fenced blocks (and every
// other page's) run exist and can be run.
func TestReadme(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n > 200 {
		t.Errorf("README.md has %d lines; keep it within 200 and move the rest into docs/", n)
	}
	script := regexp.MustCompile(`(?:^|\s)\./(scripts/[A-Za-z0-9_.-]+)`)
	for _, file := range markdownFiles(t) {
		bs, _ := blocks(t, file)
		for _, b := range bs {
			for i, l := range b.lines {
				for _, m := range script.FindAllStringSubmatch(l, -1) {
					if fi, err := os.Stat(filepath.Join(root, m[1])); err != nil || fi.Mode()&0o111 == 0 {
						t.Errorf("%s:%d: ./%s is not an executable script of the repository", b.file, b.line+i, m[1])
					}
				}
			}
		}
	}
}

// TestStandsAlone: no file of the repository refers to the folder beside it that held its
// scaffolding, or to notes that are not in the repository.
func TestStandsAlone(t *testing.T) {
	forbidden := []string{"../" + "shared", "PROTOCOL" + ".md", "GO-SDK" + "-NOTES", "sfn_moto" + "_server"}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(src, 0) >= 0 {
			return nil // a binary
		}
		for _, f := range forbidden {
			if bytes.Contains(src, []byte(f)) {
				t.Errorf("%s refers to %s, which the repository does not hold", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLayers: no package imports a package of a layer above its own, as architecture.md's table
// of layers says, and every package of the module is in that table.
func TestLayers(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	type layer struct {
		n        int
		patterns []string
	}
	var layers []layer
	row := regexp.MustCompile("^\\| (\\d+) [^|]*\\| ([^|]+) \\|")
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		l := layer{n: n}
		for _, span := range codeSpanRE.FindAllString(m[2], -1) {
			l.patterns = append(l.patterns, strings.Trim(span, "`"))
		}
		layers = append(layers, l)
	}
	if len(layers) == 0 {
		t.Fatal("architecture.md has no table of layers")
	}
	const module = "github.com/taskgate/taskgate"
	layerOf := func(pkg string) (int, bool) {
		path := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, l := range layers {
			for _, p := range l.patterns {
				if path == p || strings.HasSuffix(p, "/...") && strings.HasPrefix(path+"/", strings.TrimSuffix(p, "...")) {
					return l.n, true
				}
			}
		}
		return 0, false
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		own, ok := layerOf(pkg)
		if !ok {
			t.Errorf("%s is in no layer of architecture.md's table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if n, ok := layerOf(imp); ok && n > own {
				t.Errorf("%s (layer %d) imports %s (layer %d), a layer above it", pkg, own, imp, n)
			}
		}
	}
}

// workerSide are the packages that run inside workers, never in taskgate's drivers: the engines'
// worker SDKs and taskgate's own worker-side helpers.
var workerSide = []string{
	"go.temporal.io/sdk/worker", "go.temporal.io/sdk/testsuite", "go.temporal.io/sdk/workflow",
	"github.com/restatedev/sdk-go",
	"github.com/taskgate/taskgate/adapters/temporal/taskgateflow",
	"github.com/taskgate/taskgate/adapters/restate/taskgatehandler",
}

// TestDriversSpeakOnlyClientAPIs: no driver links a worker-side package; what a workflow and a
// driver share is in adapters/askwire (engine-neutral) and in each engine's wire package beside
// its driver (adapters/temporal/temporalwire, adapters/restate/restatewire).
func TestDriversSpeakOnlyClientAPIs(t *testing.T) {
	for _, dep := range linksOf(t, workerSide, "./adapters/temporal", "./adapters/stepfunctions", "./adapters/restate") {
		t.Errorf("a driver links %s, which only workers need", dep)
	}
}

// TestWirePackagesLinkNoEngineSDK: what a workflow and a driver share links no engine's SDK,
// client or worker, so that both sides may import it.
func TestWirePackagesLinkNoEngineSDK(t *testing.T) {
	sdks := []string{"go.temporal.io", "github.com/restatedev", "github.com/aws"}
	for _, dep := range linksOf(t, sdks, "./adapters/askwire", "./adapters/temporal/temporalwire", "./adapters/restate/restatewire") {
		t.Errorf("a wire package links %s", dep)
	}
}

// TestServeLinksOnlyTheProduct: the taskgate that ships links no worker-side package, no dev
// engines and no example (dev is in the build with -tags dev).
func TestServeLinksOnlyTheProduct(t *testing.T) {
	devOnly := append(slices.Clone(workerSide), "github.com/taskgate/taskgate/devenv", "github.com/taskgate/taskgate/examples")
	for _, dep := range linksOf(t, devOnly, "./cmd/taskgate") {
		t.Errorf("cmd/taskgate links %s, which only the development build needs", dep)
	}
}

// linksOf are the packages that pkgs link (go list -deps) which are, or are under, one of these.
func linksOf(t *testing.T, these []string, pkgs ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, dep := range strings.Fields(string(out)) {
		for _, w := range these {
			if dep == w || strings.HasPrefix(dep, w+"/") {
				found = append(found, dep)
			}
		}
	}
	return found
}
