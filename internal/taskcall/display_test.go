package taskcall

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLiveLineHold: once a question is asked, the status line stays away until the next status,
// so that it never redraws the state the answer has made stale.
func TestLiveLineHold(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := watch(r)
	l := &liveLine{f: w, tool: "approve", start: time.Now(), status: "input_required", stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	time.Sleep(150 * time.Millisecond)
	l.hold(func() { fmt.Fprint(w, "QUESTION\n") })
	time.Sleep(300 * time.Millisecond) // three ticks
	if _, after, _ := strings.Cut(s.String(), "QUESTION\n"); after != "" {
		t.Errorf("the line was drawn after the question, before any news: %q", after)
	}
	l.show("working", "deploying")
	s.waitFor(t, regexp.MustCompile(`QUESTION\n\r[-\\|/] approve \d+\.\ds working: deploying\x1b\[K`))
	l.end("completed")
	w.Close()
}

// screen is what was written to a terminal so far.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func watch(r io.Reader) *screen {
	s := &screen{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *screen) waitFor(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !re.MatchString(s.String()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %s:\n%q", re, s.String())
		}
	}
}
