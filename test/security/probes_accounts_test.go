package security

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
)

// The account of the team whose budget the probes try to spend or lower, and the role its block
// assumes there (moto assumes any role, and answers as the account its ARN names).
const (
	teamAccount = "210987654321"
	teamRole    = "arn:aws:iam::" + teamAccount + ":role/team"
)

// TestProbesAccounts runs the probes of the accounts finding against the build: blocks that read
// one account share its budget, so a block must neither read the account unseen by it nor lower
// it by naming an account its engine does not read.
func TestProbesAccounts(t *testing.T) {
	testenv.TemporalAddress(t) // dev runs the example worker on it
	endpoint := testenv.SFNEndpoint(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	unlimitedBeside(t, r, bin, endpoint)
	borrowedAccount(t, r, bin, endpoint)
}

// unlimitedBeside (a): a block with budget: unlimited that reads the account of a budgeted block
// spends the budget they share.
func unlimitedBeside(t *testing.T, r *results, bin, endpoint string) {
	machine := waitAndEcho(t, endpoint, "")
	ops := freeAddr(t)
	d := startDev(t, bin, accountsMapping(t, endpoint,
		accountBlock{name: "team", budget: "{readsPerSecond: 2, burst: 2}", machine: machine},
		accountBlock{name: "free", budget: "unlimited", machine: machine}), "--ops-http", ops)
	awaitResult(t, d, aliceKey, startTask(t, d.url, aliceKey, "on_free", map[string]any{"seconds": 0, "text": "unseen"}))
	budget, limited := engineMetric(t, ops, "taskgate_engine_read_budget", "free")
	spent, _ := engineMetric(t, ops, "taskgate_engine_read_tokens_total", "team")
	r.add(t, "accounts", "a task of a budget: unlimited block beside a block of 2 reads/s on one account, read to its end",
		"the unlimited block reads within the account's budget of 2/s, and its reads spend it",
		fmt.Sprintf("free's budget %s; team's tokens spent %v", map[bool]string{true: fmt.Sprintf("%v/s", budget), false: "none"}[limited], spent),
		limited && budget == 2 && spent > 0)
}

// borrowedAccount (b): a block whose roleArn names the team's account, where its engine's
// identity is not, does not lower the team's budget to its own. A role the engine cannot be in
// that account is, on moto (which assumes any role of a partition it knows), one of a partition it
// does not know: it answers as the caller's own account, where AWS refuses the role.
func borrowedAccount(t *testing.T, r *results, bin, endpoint string) {
	ops := freeAddr(t)
	startDev(t, bin, accountsMapping(t, endpoint,
		accountBlock{name: "team", role: teamRole, budget: "{readsPerSecond: 50}", machine: waitAndEcho(t, endpoint, teamRole)},
		accountBlock{name: "borrowed", role: "arn:aws-probe:iam::" + teamAccount + ":role/borrowed", budget: "{readsPerSecond: 0.5}",
			machine: waitAndEcho(t, endpoint, "")}), "--ops-http", ops)
	budget, _ := engineMetric(t, ops, "taskgate_engine_read_budget", "team")
	r.add(t, "accounts", "a block of 0.5 reads/s whose roleArn names the account of a block of 50/s, in a partition its credentials are not of",
		"the team's budget stays 50/s", fmt.Sprintf("team's budget %v/s", budget), budget == 50)
}

// accountBlock is one Step Functions engine block of a probe's mapping, and the state machine
// of its tool (on_NAME).
type accountBlock struct {
	name, role, budget, machine string
}

// accountsMapping writes a mapping of blocks on endpoint, each with its tool, that alice may call.
func accountsMapping(t *testing.T, endpoint string, blocks ...accountBlock) string {
	t.Helper()
	var engines, tools strings.Builder
	for _, b := range blocks {
		role := ""
		if b.role != "" {
			role = fmt.Sprintf(", roleArn: %q", b.role)
		}
		fmt.Fprintf(&engines, "  %s:\n    stepfunctions: {region: us-east-1, endpoint: %q%s}\n    budget: %s\n", b.name, endpoint, role, b.budget)
		fmt.Fprintf(&tools, `  - name: on_%s
    description: Waits, then echoes the text.
    engine: %s
    stateMachine: %s
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
`, b.name, b.name, b.machine)
	}
	dir := t.TempDir()
	src := "engines:\n" + engines.String() + "auth:\n  apiKeys:\n    - {principal: alice, keyEnv: PROBE_KEY_ALICE}\ntools:\n" + tools.String()
	if err := os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitAndEcho is the ARN of the Step Functions example that waits and echoes, in the account of
// role (moto's own account when empty).
func waitAndEcho(t *testing.T, endpoint, role string) string {
	t.Helper()
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint, RoleARN: role})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	arns, err := sfnexamples.Ensure(context.Background(), testenv.As[*sfn.Client](t, e), "arn:aws:iam::123456789012:role/taskgate-examples")
	if err != nil {
		t.Fatal(err)
	}
	return arns[sfnexamples.WaitAndEcho]
}

// engineMetric is the value of the series name{engine="engine"} at ops, and whether it is there.
func engineMetric(t *testing.T, ops, name, engine string) (float64, bool) {
	resp, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	series := name + `{engine="` + engine + `"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if value, ok := strings.CutPrefix(sc.Text(), series); ok {
			v, err := strconv.ParseFloat(value, 64)
			return v, err == nil
		}
	}
	return 0, false
}
