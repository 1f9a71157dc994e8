package tasks

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
)

// accountWait bounds how long the start waits for an engine to say which account it reads (one STS
// call on Step Functions).
const accountWait = 5 * time.Second

// blockBudget is what one engine block asks for: its reads' and its sweeps' budgets, after
// --replicas.
type blockBudget struct {
	reads, sweeps adapters.Budget
}

// readBudgets gives each block of want its read budget, by block name: blocks whose engines name
// the same account (adapters.Accounted: an AWS account and region, a namespace of one Temporal
// frontend) share one, since the quota it keeps them within is the account's, and it is the
// smallest of theirs; a block whose engine names none, or cannot say, has its own. Only blocks of
// a kind (kinds, by block) that has more than one budgeted block are asked: a block alone of its
// kind shares with nobody, and costs no call.
func readBudgets(want map[string]blockBudget, kinds map[string]string, conns map[string]adapters.Conn, log *slog.Logger) map[string]*budget.Budget {
	perKind := map[string]int{}
	for name := range want {
		perKind[kinds[name]]++
	}
	accounts := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name := range want {
		a, ok := conns[name].(adapters.Accounted)
		if !ok || perKind[kinds[name]] < 2 {
			accounts[name] = "block " + name
			continue
		}
		wg.Go(func() {
			account := accountOf(name, a, log)
			mu.Lock()
			defer mu.Unlock()
			accounts[name] = account
		})
	}
	wg.Wait()
	blocks := map[string][]string{}
	for name, account := range accounts {
		blocks[account] = append(blocks[account], name)
	}
	out := map[string]*budget.Budget{}
	for account, names := range blocks {
		slices.Sort(names)
		smallest := want[names[0]]
		for _, name := range names[1:] {
			if want[name].reads.ReadsPerSecond < smallest.reads.ReadsPerSecond {
				smallest = want[name]
			}
		}
		b := budget.New(smallest.reads, smallest.sweeps)
		for _, name := range names {
			out[name] = b
		}
		if len(names) > 1 {
			log.Info("engine blocks that read one account share one read budget, the smallest of theirs", "engines", names, "account", account,
				"readsPerSecond", smallest.reads.ReadsPerSecond)
		}
	}
	return out
}

// accountOf asks the engine of block name which account it reads; the block itself when it cannot
// tell.
func accountOf(name string, a adapters.Accounted, log *slog.Logger) string {
	ctx, cancel := context.WithTimeout(context.Background(), accountWait)
	defer cancel()
	account, err := a.Account(ctx)
	if err != nil {
		log.Warn("could not tell which account the engine block reads: it keeps a read budget of its own", "engine", name, "error", err)
		return "block " + name
	}
	return account
}
