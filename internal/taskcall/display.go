package taskcall

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// display shows the task's progress on stderr.
type display interface {
	// show is called with the status after every answer.
	show(status, message string)
	// end stops showing progress, with the final word on it; later calls do nothing.
	end(status string)
	// hold stops showing progress while f writes to stderr (asks a question), until the next show.
	hold(f func())
}

func newDisplay(stderr io.Writer, tool string) display {
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l := &liveLine{f: f, tool: tool, start: time.Now(), status: "calling", stop: make(chan struct{}), done: make(chan struct{})}
		go l.run()
		return l
	}
	return &plainLines{w: stderr}
}

// plainLines prints a line per status change, for logs and pipes.
type plainLines struct {
	w    io.Writer
	last string
}

func (p *plainLines) show(status, message string) {
	line := status
	if message != "" {
		line += ": " + message
	}
	if line != p.last {
		fmt.Fprintln(p.w, line)
		p.last = line
	}
}

func (p *plainLines) end(string) {}

func (p *plainLines) hold(f func()) { f() }

// liveLine redraws one status line in place on a terminal.
type liveLine struct {
	f     *os.File
	tool  string
	start time.Time

	mu              sync.Mutex
	status, message string
	held            bool

	stop, done chan struct{}
	endOnce    sync.Once
}

const spinner = `-\|/`

func (l *liveLine) run() {
	defer close(l.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		l.draw(spinner[i%len(spinner) : i%len(spinner)+1])
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
	}
}

func (l *liveLine) show(status, message string) {
	l.mu.Lock()
	l.status, l.message = status, strings.Join(strings.Fields(message), " ")
	l.held = false
	l.mu.Unlock()
}

func (l *liveLine) end(status string) {
	l.endOnce.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		if status != l.status {
			l.status, l.message = status, ""
		}
		l.held = false
		l.mu.Unlock()
		l.draw("")
		fmt.Fprint(l.f, "\n")
	})
}

// hold clears the line and draws nothing more until the next show, which has news after what f
// wrote: the line never shows a state that f has made stale.
func (l *liveLine) hold(f func()) {
	l.mu.Lock()
	l.held = true
	fmt.Fprint(l.f, "\r\x1b[K")
	l.mu.Unlock()
	f()
}

// draw writes the line from its start and clears what an earlier, longer line left; a line
// wider than the terminal would wrap, and \r cannot go back up.
func (l *liveLine) draw(frame string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return
	}
	line := fmt.Sprintf("%s %s %s", l.tool, elapsed(time.Since(l.start)), l.status)
	if l.message != "" {
		line += ": " + l.message
	}
	if frame != "" {
		line = frame + " " + line
	}
	if w, _, err := term.GetSize(int(l.f.Fd())); err == nil && w > 1 && utf8.RuneCountInString(line) >= w {
		line = string([]rune(line)[:w-1])
	}
	fmt.Fprint(l.f, "\r"+line+"\x1b[K")
}

func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}
