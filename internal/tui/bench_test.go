package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// benchCapture is the capture of the benchmarks: IWARP_BIG_PCAP (e.g. the
// output of iwarpsynth -size 40M) or, when unset, the bundled rping.
func benchCapture() string {
	if p := os.Getenv("IWARP_BIG_PCAP"); p != "" {
		return p
	}
	return rping
}

// BenchmarkFind measures a search that finds nothing, so looks at every
// row, in each scope (IWARP_BIG_PCAP, as BenchmarkListMove); the metric
// ms/10k-rows is the time per 10 000 rows of the list.
func BenchmarkFind(b *testing.B) {
	app, err := New(benchCapture(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	if err := app.Index(context.Background()); err != nil {
		b.Fatal(err)
	}
	st := app.St
	st.Sync(time.Time{})
	for _, c := range []struct {
		scope model.SearchScope
		text  string
	}{
		{model.ScopeList, "no such text"},
		{model.ScopeDetails, "no such text"},
		{model.ScopeBytes, "fe dc ba 98 76 54 32 10 ff"},
	} {
		b.Run(strings.ReplaceAll(c.scope.String(), " ", "-"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st.Scope = c.scope
				st.Search(c.text, true)
				st.Sync(time.Time{})
				if !strings.Contains(st.Message, "not found") {
					b.Fatal(st.Message)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(st.List.Len())*1e4, "ms/10k-rows")
		})
	}
}
