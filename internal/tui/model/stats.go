package model

import (
	"strings"
	"sync"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/report"
)

// StatTable names one of the statistics tables, Wireshark's Statistics
// menu in iwarpdump's -z terms.
type StatTable uint8

// Statistics tables.
const (
	StatOps      StatTable = iota // -z ops: RDMAP opcodes per connection and direction
	StatLatency                   // -z latency: RDMA Read latency percentiles
	StatFindings                  // -z findings: findings per severity and code
	numStats
)

var statNames = [numStats]string{"ops", "latency", "findings"}

// String returns the table's -z name.
func (t StatTable) String() string {
	if t < numStats {
		return statNames[t]
	}
	return "?"
}

// Next returns the table after t, round to the first.
func (t StatTable) Next() StatTable { return (t + 1) % numStats }

// Stats aggregates every record the decoder emits, whatever the display
// filter, into the report.Collector that iwarpdump -z uses, so that the
// TUI's tables are iwarpdump -q -z's, numbers and layout. The collector
// keeps bounded memory (see package report). One goroutine adds (the
// indexing) while another writes tables (the UI): Stats locks.
type Stats struct {
	mu sync.Mutex
	c  *report.Collector
	n  int
}

// NewStats returns empty statistics. Like iwarpdump's tables, they keep no
// throughput timeline (only the HTML report draws it).
func NewStats() *Stats {
	c := report.NewCollector()
	c.NoTimeline()
	return &Stats{c: c}
}

// Add aggregates records, in the order the decoder emitted them.
func (s *Stats) Add(recs ...*flows.Record) {
	s.mu.Lock()
	for _, r := range recs {
		s.c.Add(r)
	}
	s.n += len(recs)
	s.mu.Unlock()
}

// Records returns how many records were added; a table changes only when
// it does.
func (s *Stats) Records() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// Text writes table t as iwarpdump -q -z writes it.
func (s *Stats) Text(t StatTable) (string, error) {
	var b strings.Builder
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	switch t {
	case StatOps:
		err = s.c.WriteOps(&b)
	case StatLatency:
		err = s.c.WriteLatency(&b)
	case StatFindings:
		err = s.c.WriteFindings(&b)
	}
	return b.String(), err
}
