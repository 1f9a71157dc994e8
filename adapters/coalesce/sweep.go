package coalesce

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/pace"
)

// Swept is what sweeps read through: the adapters.Engine these Readings serve. Its Sweep reads one
// page of the listing of many executions of the targets of one SweepGroup in one engine call, its
// SweepEnded a page of those that ended since a time (adapters.ErrUnsupported where the engine
// cannot tell), and its Outcome confirms the end of an execution that a listing no longer shows
// running, reading what it will be asked for next (through its hooks, which charge all three to
// the read budget, and through these Readings, which keep the outcome and tell who waits). Its
// Notices, where the engine has an event source, tell of changes as they happen
// (adapters.ErrUnsupported where it has none).
type Swept interface {
	SweepGroup(t adapters.Target) string
	Sweep(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error)
	SweepEnded(ctx context.Context, o adapters.SweepOptions) ([]adapters.Listed, string, error)
	Outcome(ctx context.Context, t adapters.Target, r adapters.Ref) (adapters.Outcome, error)
	Notices(ctx context.Context, heard func(at time.Time, changed []adapters.Listed)) error
}

const (
	// defaultSweepEvery is how often the followed executions of a group are swept.
	defaultSweepEvery = time.Second
	// defaultInterest is how long a read keeps a running execution among those swept.
	defaultInterest = 2 * time.Minute
	// sweepPages bounds the pages of one group's sweep in one round.
	sweepPages = 100
	// endsOverlap is how far back before its last round a sweep of ends asks again: an end that
	// a listing shows up to this late is still found.
	endsOverlap = 10 * time.Second
	// confirmsAtOnce bounds the outcome reads of confirmations in flight. Under a read budget a
	// sweep's listing and the outcomes go ahead of every turn in the order they come, so the next
	// round's listing, which keeps every followed reading fresh, waits for the tokens of the
	// outcomes in flight: few, so that it waits little, and enough to spend what the budget gives.
	confirmsAtOnce = 2
	// confirmsApart bounds them where listings spend a budget of their own (Options.ListsApart):
	// then the budget paces the outcomes, and the bound only keeps the engine's calls in flight
	// few (one Step Functions DescribeExecution, which is its outcome, takes up to a second under
	// load: two at a time confirmed fewer ends a second than a replica's share of the budget).
	confirmsApart = 8
	// relistEvery is how often a group left to its executions' own reads is listed again, to
	// count what its listing costs now.
	relistEvery = time.Minute
	// noticesRetry is how long after its event source failed the sweeps receive from it again.
	noticesRetry = 10 * time.Second
	// reconcileEvery is how often a group is listed while the engine's event source tells what
	// changes (it received in the last noticesLive): the listing catches what the source drops,
	// and the listing quota is left for the reads that wait on one (hurry).
	reconcileEvery = 30 * time.Second
	noticesLive    = 5 * time.Second
)

// sweeper follows the running executions that reads asked about recently, per sweep group (the
// targets that one listing call reads together, as the driver says: every target of a block
// whose engine lists across them, or one target each), and keeps their readings fresh a
// listing page at a time: a round every Options.SweepEvery, or sooner when a read finds nothing
// to answer with. A round costs a listing per group, however many targets the group has.
//
// What a listing shows running refreshes the reading's time. An execution listed as ended, or no
// longer listed, is confirmed by reading its outcome (which tells Ended) before anyone is told,
// when someone waits on its changes (a listener, a call waiting for its result); otherwise its
// end is only marked, and its next read reads the outcome: a replica that only answers polls
// reads each end once it is asked, not each end that any replica's client asked about once.
// Confirmations run beside the rounds, never in them: an outcome read waits for its tokens of the
// budget, or through the engine's throttling, and the followed executions' readings must not age
// while it does. Where the engine lists ends, a round lists the running executions only when one
// of the followed was not known running since the ends were listed, and else the ends since the
// last round: its cost follows the ends, not the running. A group whose listing takes more pages
// than it has executions followed (a few tasks of a state machine that runs thousands) is left to
// its executions' own reads, at their curves, and listed again a minute later to count anew.
//
// Where the engine has an event source, its notices confirm the ends they tell of as a listing
// would, and every running reading is true as of the last receive, as far as the source knows:
// while it tells, a round lists a group every reconcileEvery only, to catch what the source
// drops, and leaves the listing quota to the reads that wait on a listing.
type sweeper struct {
	engine         Swept
	noEnds         atomic.Bool // the engine cannot list ends
	every, lasting time.Duration
	kick           chan struct{}
	stop           context.CancelFunc
	done           chan struct{}
	nextRound      atomic.Int64 // unix nanoseconds of the next round

	mu       sync.Mutex
	followed map[string]*followed // by sweep group
	// groups are the targets' sweep groups, by target name: asked of the engine once, not on
	// every read that follows an execution.
	groups map[string]string
	// wanted are the groups a read waits on (it found nothing to answer with): a round lists
	// them before the others, once each.
	wanted map[string]bool
	// confirming are the executions whose outcomes are being read: rounds leave them out.
	confirming map[adapters.ExecKey]bool
	slots      chan struct{} // one per confirmation reading its outcome
	pending    sync.WaitGroup

	rounds, pages, confirms, failures, notices atomic.Uint64
	// listing is the time spent in listing calls, their budget's waits included (nanoseconds).
	listing atomic.Int64
	// heard is when the engine's event source last told what changed (unix nanoseconds; zero
	// without one).
	heard atomic.Int64
}

// followed is a sweep group: its targets, by name, and the executions of them being swept.
// endsFrom is zero, or the time from which every end of the group's executions was listed, up to
// the start of the last round. pages is how many pages its last listing of the running took, and
// listedAt when.
type followed struct {
	group          string
	targets        map[string]adapters.Target
	refs           map[execution]interest
	endsFrom, last time.Time
	pages          int
	listedAt       time.Time
}

// execution is an execution of a target, by the target's name.
type execution struct {
	target string
	ref    adapters.Ref
}

// key is the execution's key in the cache.
func (x execution) key() adapters.ExecKey { return adapters.ExecKey{Target: x.target, ID: x.ref.ID} }

// interest is since when an execution is swept and until when, when the task that the read that
// asked for it last was created (its pace's Created; all unix nanoseconds, zero: unknown), the
// rest of that pace (its tool's curve, shared by the tool's tasks), and what its context carries
// (Options.Carry). seen says whether a read or a listing ever found it running. One never seen running (a read the budget
// refused before it was made) may name nothing at all: a listing that does not show it running
// ends its sweeping, and its reader's own read tells whether it ended; no outcome is read for it.
type interest struct {
	since, until, created int64
	seen                  bool
	curve                 pace.Curve
	carried               context.Context
}

// pace is the pace of the read that asked for the execution last.
func (in interest) pace() (pace.Pace, bool) {
	p := pace.Pace{Curve: in.curve}
	if in.created != 0 {
		p.Created = time.Unix(0, in.created)
	}
	return p, p.Paced()
}

// SweepCounts are what an Engine's sweeps have done since New.
type SweepCounts struct {
	// Rounds of all groups, Pages read, Confirms made (outcomes read of executions a sweep no
	// longer showed running), Failures (sweeps that the engine or the budget refused), and
	// Notices (receives from the engine's event source).
	Rounds, Pages, Confirms, Failures, Notices uint64
	// Listing is the time the pages took, waits for the read budget's tokens included: a round
	// lists once a SweepEvery at most, so a listing time near the rounds' is sweeps kept waiting.
	Listing time.Duration
	// Followed is how many running executions the sweeps follow now.
	Followed int
	// Groups are the sweep groups followed now, by name.
	Groups map[string]GroupCounts
}

// GroupCounts are what the sweeps follow of one group, and how.
type GroupCounts struct {
	// Followed is how many running executions of the group are followed; Pages how many pages the
	// last listing of its running executions took.
	Followed, Pages int
	// ByReads: the group is left to its executions' own reads, which cost fewer calls than its
	// listing.
	ByReads bool
}

// Sweeps starts sweeping through engine (the Engine these Readings serve), until Close: the
// running executions that reads asked about in the last Options.Interest are swept every
// Options.SweepEvery, so that their readings stay fresh at the cost of a listing page per round
// rather than a read per execution; and the engine's notices are received, where it has an
// event source. Call it before the first read; it does nothing when the cache keeps nothing
// (Size 0), or when called again.
func (e *Readings) Sweeps(engine Swept) {
	if e.opts.Size <= 0 || e.sweeps != nil {
		return
	}
	s := &sweeper{engine: engine, every: cmp.Or(e.opts.SweepEvery, defaultSweepEvery), lasting: cmp.Or(e.opts.Interest, defaultInterest),
		kick: make(chan struct{}, 1), done: make(chan struct{}), followed: map[string]*followed{}, groups: map[string]string{}, wanted: map[string]bool{},
		confirming: map[adapters.ExecKey]bool{}, slots: make(chan struct{}, confirmsAtOnce)}
	if e.opts.ListsApart {
		s.slots = make(chan struct{}, confirmsApart)
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	e.sweeps = s
	s.pending.Go(func() { e.receiveNotices(ctx) })
	go e.sweepRounds(ctx)
}

// SweepCounts reads the sweeps' counters (all zero without Sweeps).
func (e *Readings) SweepCounts() SweepCounts {
	s := e.sweeps
	if s == nil {
		return SweepCounts{}
	}
	now := time.Now()
	s.mu.Lock()
	n, groups := 0, make(map[string]GroupCounts, len(s.followed))
	for name, f := range s.followed {
		n += len(f.refs)
		groups[name] = GroupCounts{Followed: len(f.refs), Pages: f.pages, ByReads: leftToReads(f, now)}
	}
	s.mu.Unlock()
	return SweepCounts{Rounds: s.rounds.Load(), Pages: s.pages.Load(), Listing: time.Duration(s.listing.Load()), Confirms: s.confirms.Load(), Failures: s.failures.Load(),
		Notices: s.notices.Load(), Followed: n, Groups: groups}
}

// follow keeps r among the executions swept for a while after a read that found it running (seen),
// or that the budget refused before it was made.
func (e *Readings) follow(ctx context.Context, t adapters.Target, r adapters.Ref, p pace.Pace, paced, seen bool) {
	s := e.sweeps
	if s == nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groupOf(t)
	f, ok := s.followed[g]
	if !ok {
		f = &followed{group: g, targets: map[string]adapters.Target{}, refs: map[execution]interest{}}
		s.followed[g] = f
	}
	if _, ok := f.targets[t.Name]; !ok {
		f.targets[t.Name] = t
	}
	x := execution{t.Name, r}
	in, ok := f.refs[x]
	if !ok { // what a read carries is kept once: an execution is read through one tool
		in.since, in.curve = now.UnixNano(), p.Curve
		if e.opts.Carry != nil {
			in.carried = e.opts.Carry(ctx)
		}
	}
	in.until, in.created, in.seen = now.Add(s.lasting).UnixNano(), 0, in.seen || seen
	if paced && !p.Created.IsZero() {
		in.created = p.Created.UnixNano()
	}
	f.refs[x] = in
}

// groupOf is t's sweep group. Called with s.mu held.
func (s *sweeper) groupOf(t adapters.Target) string {
	g, ok := s.groups[t.Name]
	if !ok {
		g = s.engine.SweepGroup(t)
		s.groups[t.Name] = g
	}
	return g
}

// unfollow stops sweeping x.
func (e *Readings) unfollow(g string, x execution) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.followed[g]; ok {
		delete(f.refs, x)
	}
}

// hurry asks for a round soon, and for the listing of t's group before the others' (in the round
// under way if it has not listed it yet), even of a group left to reads: a read of t found nothing
// to answer with and the budget is spent. Under a read budget a round's listings wait for their
// tokens one after the other, and the read waits only for the listing in flight and its own.
func (e *Readings) hurry(t adapters.Target) {
	s := e.sweeps
	if s == nil {
		return
	}
	s.mu.Lock()
	s.wanted[s.groupOf(t)] = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// nextSweep is when the next round will have refreshed a swept reading: zero without sweeps.
func (e *Readings) nextSweep() time.Time {
	if s := e.sweeps; s != nil {
		return time.Unix(0, s.nextRound.Load())
	}
	return time.Time{}
}

// heardAt is when the engine's event source last told what changed: zero without one.
func (e *Readings) heardAt() time.Time {
	if s := e.sweeps; s != nil {
		if n := s.heard.Load(); n != 0 {
			return time.Unix(0, n)
		}
	}
	return time.Time{}
}

// sweepRounds starts a round every s.every (a quarter of it after the end of a round that lasted
// longer), and sooner when hurried (at most four times as often), until the Engine closes.
func (e *Readings) sweepRounds(ctx context.Context) {
	s := e.sweeps
	defer close(s.done)
	defer s.pending.Wait()
	next := time.Now().Add(s.every)
	for {
		s.nextRound.Store(next.UnixNano())
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-s.kick:
			timer.Stop()
			if driver.Sleep(ctx, s.every/4) != nil {
				return
			}
		}
		began := time.Now()
		e.sweepRound(ctx)
		next = latest(began.Add(s.every), time.Now().Add(s.every/4))
	}
}

// sweepRound sweeps every group once, but those left to reads, and each group wanted during the
// round (hurry) next, once more when the round had already swept it.
func (e *Readings) sweepRound(ctx context.Context) {
	s := e.sweeps
	s.rounds.Add(1)
	round := e.toSweep(time.Now())
	taken := map[string]bool{}
	for {
		f, ok := e.takeWanted(time.Now(), taken)
		if ok {
			round = slices.DeleteFunc(round, func(g followed) bool { return g.group == f.group })
		} else if len(round) > 0 {
			f, round = round[0], round[1:]
		} else {
			return
		}
		swept, err := e.sweepGroup(ctx, f)
		if err != nil {
			s.failures.Add(1)
		}
		s.mu.Lock()
		if g, ok := s.followed[f.group]; ok {
			g.endsFrom, g.last, g.pages, g.listedAt = swept.endsFrom, swept.last, swept.pages, swept.listedAt
		}
		s.mu.Unlock()
	}
}

// leftToReads reports whether f's executions cost fewer calls read one by one than listed: its
// last listing of the running executions, a minute ago at most, took more pages than f has
// executions followed. Their own reads keep them then, at their curves.
func leftToReads(f *followed, now time.Time) bool {
	return len(f.refs) > 0 && f.pages > len(f.refs) && now.Sub(f.listedAt) < relistEvery
}

// toSweep is a copy of what is followed now and not left to reads (see sweepCopy).
func (e *Readings) toSweep(now time.Time) []followed {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []followed
	live := now.Sub(e.heardAt()) < noticesLive
	for _, f := range s.followed {
		if leftToReads(f, now) || live && now.Sub(f.listedAt) < reconcileEvery {
			continue
		}
		if c, ok := e.sweepCopy(f, now); ok {
			out = append(out, c)
		}
	}
	return out
}

// takeWanted is a copy of a group wanted since the round took it last (taken: the groups the
// round took so), if there is one to sweep; the round takes it.
func (e *Readings) takeWanted(now time.Time, taken map[string]bool) (followed, bool) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.wanted {
		delete(s.wanted, name)
		if f, ok := s.followed[name]; ok && !taken[name] {
			if c, ok := e.sweepCopy(f, now); ok {
				taken[name] = true
				return c, true
			}
		}
	}
	return followed{}, false
}

// sweepCopy is a copy of f without the executions that nobody asked about for a while or whose
// end is known, which it forgets (and f when none is left), and without those being confirmed;
// ok is false when none is left to sweep. Called with s.mu held.
func (e *Readings) sweepCopy(f *followed, now time.Time) (_ followed, ok bool) {
	s := e.sweeps
	c := *f
	c.refs, c.targets = map[execution]interest{}, map[string]adapters.Target{}
	kept := map[string]bool{}
	for x, in := range f.refs {
		k := x.key()
		if v, ok := e.cache.Get(k); now.UnixNano() > in.until || ok && endKnown(v) {
			delete(f.refs, x)
			continue
		}
		kept[x.target] = true
		if !s.confirming[k] {
			c.refs[x] = in
			c.targets[x.target] = f.targets[x.target]
		}
	}
	maps.DeleteFunc(f.targets, func(name string, _ adapters.Target) bool { return !kept[name] })
	if len(f.refs) == 0 {
		delete(s.followed, f.group)
	}
	return c, len(c.refs) > 0
}

// swept is what one sweep of a group learnt: from when its ends are known (endsFrom), when the
// last round that listed them began (last), and, when it listed the running executions, how many
// pages that took and when.
type swept struct {
	endsFrom, last time.Time
	pages          int
	listedAt       time.Time
}

// sweepGroup sweeps f's executions once: by their ends since the last round where it can, else
// by the listing of the running ones, a page at a time. Executions followed since the last round
// (newcomers: a first poll of a task, on a replica that never read it) are listed by id beside the
// ends, where they are few: two small listings rather than a listing of every running execution.
//
// Under a read budget the listing goes ahead of every client's turn (one page answers for all the
// followed tasks), and so does each outcome, as every outcome read does: it is the one read that
// an end costs, which its task's clients ask for next.
func (e *Readings) sweepGroup(ctx context.Context, f followed) (swept, error) {
	was := swept{endsFrom: f.endsFrom, last: f.last, pages: f.pages, listedAt: f.listedAt}
	ts := make([]adapters.Target, 0, len(f.targets))
	for _, t := range f.targets {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b adapters.Target) int { return cmp.Compare(a.Name, b.Name) })
	at := time.Now()
	if !e.sweeps.noEnds.Load() && !f.endsFrom.IsZero() {
		newcomers := e.newcomers(f, f.endsFrom)
		if n := len(newcomers.refs); n == 0 || n <= driver.SweepIDs && n < len(f.refs) {
			err := e.sweepEnds(ctx, f, ts, refsOf(f), at, newcomers.refs)
			if err == nil && n > 0 {
				_, err = e.sweepRunning(ctx, newcomers, ts, refsOf(newcomers), at)
			}
			if err == nil {
				now := was
				now.last = at
				return now, nil
			}
			if !errors.Is(err, adapters.ErrUnsupported) {
				return was, err
			}
			e.sweeps.noEnds.Store(true)
		}
	}
	pages, err := e.sweepRunning(ctx, f, ts, refsOf(f), at)
	if err != nil {
		return was, err
	}
	return swept{endsFrom: at, last: at, pages: pages, listedAt: at}, nil
}

// refsOf are the refs of f's executions, in order, each once.
func refsOf(f followed) []adapters.Ref {
	refs := make([]adapters.Ref, 0, len(f.refs))
	for x := range f.refs {
		refs = append(refs, x.ref)
	}
	slices.SortFunc(refs, func(a, b adapters.Ref) int { return cmp.Compare(a.ID, b.ID) })
	return slices.Compact(refs)
}

// newcomers is f with only its executions that had no running reading, nor were shown running by
// a listing, at since or after: a listing of the ends since then cannot tell whether they run.
func (e *Readings) newcomers(f followed, since time.Time) followed {
	c := f
	c.refs = map[execution]interest{}
	for x, in := range f.refs {
		v, ok := e.cache.Get(x.key())
		if !ok || endKnown(v) || latest(v.status.ReadAt, v.swept).Before(since) {
			c.refs[x] = in
		}
	}
	return c
}

// sweepEnds reads the ends of f's executions since a little before its last round, page by page,
// and confirms those it shows: the others were running as of at, but for the newcomers, of which
// it cannot tell.
func (e *Readings) sweepEnds(ctx context.Context, f followed, ts []adapters.Target, refs []adapters.Ref, at time.Time, newcomers map[execution]interest) error {
	ended := map[adapters.Ref]bool{}
	_, err := e.pages(func(page string) (string, error) {
		listed, next, err := e.sweeps.engine.SweepEnded(ctx, adapters.SweepOptions{Targets: ts, Refs: refs, Page: page, Since: f.last.Add(-endsOverlap)})
		for _, l := range listed {
			ended[l.Ref] = l.Status.State.Terminal()
		}
		return next, err
	})
	if err != nil {
		return err
	}
	for x, in := range f.refs {
		_, isNew := newcomers[x]
		switch {
		case ended[x.ref]:
			e.ended(ctx, f.group, f.targets[x.target], x, in)
		case !isNew:
			e.stillRunning(x.key(), at)
		}
	}
	return nil
}

// sweepRunning reads the listing of f's running executions page by page, refreshes the readings
// of those it shows running, and confirms the others; it says how many pages it read. An
// execution followed for less than two rounds that no page shows yet is left for the next
// round: a listing catches up with a start late. An outcome that is not there yet is a listing
// behind the engine: the execution is swept again.
func (e *Readings) sweepRunning(ctx context.Context, f followed, ts []adapters.Target, refs []adapters.Ref, at time.Time) (int, error) {
	running := make(map[adapters.Ref]adapters.Status, len(refs))
	pages, err := e.pages(func(page string) (string, error) {
		listed, next, err := e.sweeps.engine.Sweep(ctx, adapters.SweepOptions{Targets: ts, Refs: refs, Page: page})
		for _, l := range listed {
			if !l.Status.State.Terminal() {
				running[l.Ref] = l.Status
			}
		}
		return next, err
	})
	if err != nil {
		return 0, err
	}
	young := at.Add(-2 * e.sweeps.every)
	for x, in := range f.refs {
		st, ok := running[x.ref]
		switch {
		case ok:
			e.swept(x.key(), st, at, in)
			e.seen(f.group, x)
		case in.since > young.UnixNano():
		case in.seen:
			e.ended(ctx, f.group, f.targets[x.target], x, in)
		default:
			e.unfollow(f.group, x)
			e.changed(x.key())
		}
	}
	return pages, nil
}

// seen records that a listing showed x running.
func (e *Readings) seen(g string, x execution) {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.followed[g]; ok {
		if in, ok := f.refs[x]; ok {
			in.seen = true
			f.refs[x] = in
		}
	}
}

// pages reads the pages of a listing, up to sweepPages, with read: one page's, which gives the
// next ("" after the last). It says how many it read.
func (e *Readings) pages(read func(page string) (next string, err error)) (int, error) {
	page, n := "", 0
	for range sweepPages {
		began := time.Now()
		next, err := read(page)
		e.sweeps.listing.Add(int64(time.Since(began)))
		if err != nil {
			return n, err
		}
		n++
		e.sweeps.pages.Add(1)
		if page = next; page == "" {
			break
		}
	}
	return n, nil
}

// ended takes what a listing or a notice says, that the followed execution x ended: confirmed by
// reading its outcome when someone waits on its changes (Changes), else marked so that its next
// read reads the outcome. Either way the sweeps leave it.
func (e *Readings) ended(ctx context.Context, g string, t adapters.Target, x execution, in interest) {
	k := x.key()
	if e.waitedOn(k) {
		e.confirm(ctx, g, t, x, in)
		return
	}
	e.cache.Update(k, func(v *entry) {
		if !endKnown(*v) {
			v.endListed = true
		}
	})
	e.unfollow(g, x)
}

// confirm reads, beside the rounds, the outcome of an execution that a listing showed ended, or
// no longer showed running, which tells whoever waits; one the engine no longer has is no longer
// followed. A read the engine or the budget refused for now is made again, after its retry-after
// and a round at least, for as long as the execution is followed: the listing told its end
// already. Rounds leave the execution out until its outcome is read or the read failed.
func (e *Readings) confirm(ctx context.Context, g string, t adapters.Target, x execution, in interest) {
	s := e.sweeps
	k := x.key()
	s.mu.Lock()
	if s.confirming[k] {
		s.mu.Unlock()
		return
	}
	s.confirming[k] = true
	s.mu.Unlock()
	s.pending.Go(func() {
		defer func() {
			s.mu.Lock()
			delete(s.confirming, k)
			s.mu.Unlock()
		}()
		if in.carried != nil { // its values, the sweeps' cancellation
			carried, cancel := context.WithCancel(in.carried)
			defer context.AfterFunc(ctx, cancel)()
			defer cancel()
			ctx = carried
		}
		for {
			err := e.readOutcome(ctx, t, x.ref)
			switch {
			case err == nil:
				s.confirms.Add(1)
				return
			case errors.Is(err, adapters.ErrNotFound): // gone: its readers are told so
				e.unfollow(g, x)
				return
			case !errors.Is(err, adapters.ErrUnavailable) || !e.following(g, x):
				return
			}
			if driver.Sleep(ctx, max(driver.RetryAfter(err), s.every)) != nil {
				return
			}
		}
	})
}

// readOutcome reads an outcome for confirm, as many at a time as the slots.
func (e *Readings) readOutcome(ctx context.Context, t adapters.Target, r adapters.Ref) error {
	s := e.sweeps
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err := s.engine.Outcome(ctx, t, r)
	return err
}

// following reports whether x is among the executions swept, and was asked about lately.
func (e *Readings) following(g string, x execution) bool {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.followed[g]
	if !ok {
		return false
	}
	in, ok := f.refs[x]
	return ok && time.Now().UnixNano() < in.until
}

// stillRunning records that a listing of ends made at did not show the execution k: it was
// running as of at.
func (e *Readings) stillRunning(k adapters.ExecKey, at time.Time) {
	if _, ok := e.cache.Get(k); !ok {
		return
	}
	e.cache.Update(k, func(v *entry) {
		if !endKnown(*v) && !v.status.ReadAt.IsZero() {
			v.swept = latest(v.swept, at)
		}
	})
}

// swept records that a listing made at showed the execution k running with st. A reading it had
// keeps its details (a listing is coarser: no questions, no progress) and is now known true as of
// at; one it had not is made from the listing, good for the task's polling interval as a point
// read is.
func (e *Readings) swept(k adapters.ExecKey, st adapters.Status, at time.Time, in interest) {
	changed := false
	e.cache.Update(k, func(v *entry) {
		switch {
		case endKnown(*v):
		case v.status.ReadAt.IsZero():
			st.ReadAt = at
			p, paced := in.pace()
			*v = e.reading(st, p, paced)
			changed = true
		case v.status.State == adapters.Submitted && st.State != adapters.Submitted:
			v.status.State, v.status.Native, v.status.Message, v.status.Updated = st.State, st.Native, st.Message, st.Updated
			v.swept, changed = at, true
		default:
			v.swept = latest(v.swept, at)
		}
	})
	if changed {
		e.changed(k)
	}
}

// receiveNotices receives the notices of the engine's event source, if it has one, until ctx
// ends: after one that failed, again noticesRetry later.
func (e *Readings) receiveNotices(ctx context.Context) {
	s := e.sweeps
	for {
		err := s.engine.Notices(ctx, func(at time.Time, changed []adapters.Listed) { e.heard(ctx, at, changed) })
		if errors.Is(err, adapters.ErrUnsupported) || driver.Sleep(ctx, noticesRetry) != nil {
			return
		}
	}
}

// heard takes a receive of the engine's event source, begun at: the executions it tells ended
// are taken as a listing's ends (ended), a change of state it tells is recorded as a listing's,
// and every running reading is true as of at (heardAt).
func (e *Readings) heard(ctx context.Context, at time.Time, changed []adapters.Listed) {
	s := e.sweeps
	s.notices.Add(1)
	for _, l := range changed {
		for _, f := range e.followers(l.Ref) {
			if l.Status.State.Terminal() {
				e.ended(ctx, f.group, f.t, f.x, f.in)
			} else {
				e.swept(f.x.key(), l.Status, at, f.in)
			}
		}
	}
	s.heard.Store(max(s.heard.Load(), at.UnixNano()))
}

// follower is one followed execution of a Ref: its group, its target and what follows it.
type follower struct {
	group string
	t     adapters.Target
	x     execution
	in    interest
}

// followers are the followed executions of r, of any target.
func (e *Readings) followers(r adapters.Ref) []follower {
	s := e.sweeps
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []follower
	for g, f := range s.followed {
		for name, t := range f.targets {
			x := execution{name, r}
			if in, ok := f.refs[x]; ok {
				out = append(out, follower{group: g, t: t, x: x, in: in})
			}
		}
	}
	return out
}

// Changes returns a channel that is closed at the next change that the Readings record of the
// execution: a new reading by a point read, a change of state a sweep shows, its end, a cancel or
// an answer asked. Whoever follows a task waits on it rather than polling (adapters.Changes). It
// may also be closed when the execution leaves the cache: waiters read again when woken.
func (e *Readings) Changes(t adapters.Target, r adapters.Ref) <-chan struct{} {
	k := driver.KeyOf(t, r)
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	c, ok := e.watchers[k]
	if !ok {
		if e.watchers == nil {
			e.watchers = map[adapters.ExecKey]chan struct{}{}
		}
		if len(e.watchers) >= 2*max(e.watchersKept, minWatchers) {
			e.pruneWatchers()
		}
		c = make(chan struct{})
		e.watchers[k] = c
	}
	return c
}

// minWatchers is how many watchers are kept before any is pruned.
const minWatchers = 1024

// pruneWatchers wakes and forgets the watchers of executions that the cache no longer holds:
// without a reading, only a read would change them, and a waiter that left does not come back to
// read. Called as the watchers double, it costs each new watcher a constant time.
func (e *Readings) pruneWatchers() {
	for k, c := range e.watchers {
		if _, ok := e.cache.Get(k); !ok {
			close(c)
			delete(e.watchers, k)
		}
	}
	e.watchersKept = len(e.watchers)
}

// waitedOn reports whether someone waits on Changes of k.
func (e *Readings) waitedOn(k adapters.ExecKey) bool {
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	_, ok := e.watchers[k]
	return ok
}

// changed wakes whoever waits on Changes of k.
func (e *Readings) changed(k adapters.ExecKey) {
	e.watchMu.Lock()
	c, ok := e.watchers[k]
	delete(e.watchers, k)
	e.watchMu.Unlock()
	if ok {
		close(c)
	}
}

// Close stops the sweeps.
func (e *Readings) Close() {
	if s := e.sweeps; s != nil {
		s.stop()
		<-s.done
	}
}
