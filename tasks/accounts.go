package tasks

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/budget"
	"github.com/taskgate/taskgate/adapters/driver"
)

// accountWait bounds how long the start waits for an engine to say which account it reads (one STS
// call on Step Functions).
const accountWait = 5 * time.Second

// blockBudget is what one engine block asks for: its reads' and its sweeps' budgets, after
// --replicas; reads are unlimited for a block with budget: unlimited.
type blockBudget struct {
	reads, sweeps adapters.Budget
}

// readBudgets gives each block of want its read budget, by block name: blocks whose engines name
// the same account (driver.Accounted: an AWS account and region, a namespace of one Temporal
// frontend) share one, since the quota it keeps them within is the account's, and it is the
// smallest of the budgeted ones'. An unlimited block shares it too (it reads the same quota), and
// has none only when every block of its account is unlimited. A block whose engine names no
// account, or cannot say, is an account of its own.
func readBudgets(want map[string]blockBudget, kinds map[string]string, conns map[string]adapters.Conn, log *slog.Logger) map[string]*budget.Budget {
	out := map[string]*budget.Budget{}
	for account, names := range byAccount(accountsOf(want, kinds, conns, log)) {
		smallest, ok := smallestBudget(want, names)
		if !ok {
			continue // every block of the account is unlimited: so they stay
		}
		b := budget.New(smallest.reads, smallest.sweeps)
		for _, name := range names {
			out[name] = b
		}
		if len(names) > 1 {
			log.Info("engine blocks that read one account share one read budget, the smallest of theirs", "engines", names, "account", account,
				"readsPerSecond", smallest.reads.ReadsPerSecond, "unlimited", unlimited(want, names))
		}
	}
	return out
}

// accountsOf is, by block, the account its engine reads. Only blocks of a kind (kinds, by block)
// that has more than one block, one of them budgeted, are asked: a block alone of its kind shares
// with nobody, unlimited blocks with no budgeted one stay unlimited, and neither costs a call.
func accountsOf(want map[string]blockBudget, kinds map[string]string, conns map[string]adapters.Conn, log *slog.Logger) map[string]string {
	perKind, budgeted := map[string]int{}, map[string]bool{}
	for name, b := range want {
		perKind[kinds[name]]++
		budgeted[kinds[name]] = budgeted[kinds[name]] || !b.reads.Unlimited()
	}
	accounts := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name := range want {
		a, ok := conns[name].(driver.Accounted)
		if !ok || perKind[kinds[name]] < 2 || !budgeted[kinds[name]] {
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
	return accounts
}

// byAccount is, by account, the names of its blocks, sorted.
func byAccount(accounts map[string]string) map[string][]string {
	blocks := map[string][]string{}
	for name, account := range accounts {
		blocks[account] = append(blocks[account], name)
	}
	for _, names := range blocks {
		slices.Sort(names)
	}
	return blocks
}

// smallestBudget is the budget of the budgeted block of names that may read the least; ok is false
// when they are all unlimited.
func smallestBudget(want map[string]blockBudget, names []string) (smallest blockBudget, ok bool) {
	for _, name := range names {
		b := want[name]
		if !b.reads.Unlimited() && (!ok || b.reads.ReadsPerSecond < smallest.reads.ReadsPerSecond) {
			smallest, ok = b, true
		}
	}
	return smallest, ok
}

// unlimited is the blocks of names with budget: unlimited.
func unlimited(want map[string]blockBudget, names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(name string) bool { return !want[name].reads.Unlimited() })
}

// accountOf asks the engine of block name which account it reads; the block itself when it cannot
// tell.
func accountOf(name string, a driver.Accounted, log *slog.Logger) string {
	ctx, cancel := context.WithTimeout(context.Background(), accountWait)
	defer cancel()
	account, err := a.Account(ctx)
	if err != nil {
		log.Warn("could not tell which account the engine block reads: it shares no read budget", "engine", name, "error", err)
		return "block " + name
	}
	return account
}
