//go:build linux

package capture

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestChunkBuffersHuge: where the system gives transparent huge pages on
// request, every aligned 2 MiB page that holds octets of a buffer lies
// whole in a range advised for them (THPeligible in /proc/self/smaps), so
// that the buffers fault in whole huge pages. The last 1 MiB of three
// buffers had shared its huge page with octets outside the advice, and
// went in 256 pages of 4 KiB.
func TestChunkBuffersHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("no transparent huge pages here (%q, %v)", mode, err)
	}
	for _, n := range []int{1, 2, 3, 4, 5} {
		bufs, release := ChunkBuffers(n)
		vmas := eligibleRanges(t)
		const huge = 2 << 20
		for i, b := range bufs {
			lo := uintptrOf(b)
			for p := lo &^ (huge - 1); p < lo+uintptr(cap(b)); p += huge {
				covered := false
				for _, v := range vmas {
					if v[0] <= p && p+huge <= v[1] {
						covered = true
					}
				}
				if !covered {
					t.Errorf("%d buffers: buffer %d's huge page at %#x is not all in a range eligible for huge pages", n, i, p)
				}
			}
		}
		release()
	}
}

// eligibleRanges lists the mappings of /proc/self/smaps that say
// THPeligible: 1 (the test is skipped on kernels that do not say).
func eligibleRanges(t *testing.T) [][2]uintptr {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var out [][2]uintptr
	var cur [2]uintptr
	said := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line + " ")[0], "-"); ok && !strings.HasSuffix(lo, ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				cur = [2]uintptr{uintptr(a), uintptr(b)}
				continue
			}
		}
		if v, ok := strings.CutPrefix(line, "THPeligible:"); ok {
			said = true
			if strings.TrimSpace(v) == "1" {
				out = append(out, cur)
			}
		}
	}
	if !said {
		t.Skip("/proc/self/smaps does not say which mappings are eligible for huge pages")
	}
	return out
}
