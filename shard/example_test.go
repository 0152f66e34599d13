package shard_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/shard"
)

// Both directions of a connection hash alike, so they land in one shard.
func ExampleHash() {
	a := netip.MustParseAddrPort("192.0.2.2:40001")
	b := netip.MustParseAddrPort("192.0.2.1:7174")
	fmt.Println(shard.Hash(a, b) == shard.Hash(b, a), shard.Hash(a, b)%8)
	// Output: true 7
}

// Worker 3 of 8 (e.g. a Kubernetes Indexed Job pod with
// JOB_COMPLETION_INDEX=3) reads the whole capture and keeps its share.
func ExampleSelector() {
	sel, err := shard.Parse("3/8")
	if err != nil {
		fmt.Println(err)
		return
	}
	src, err := capture.Open(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	kept, all := 0, 0
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		all++
		if sel.Keep(&p) {
			kept++ // hand p to a flows.Decoder here
		}
	}
	fmt.Println(sel.Name("rping"), kept <= all)
	// Output: rping.shard-3-of-8 true
}

// Split a capture by connection into 4 files.
func ExampleSplit() {
	dir, _ := os.MkdirTemp("", "split")
	defer os.RemoveAll(dir)
	m, err := capture.OpenMerge(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	w, err := shard.Split(context.Background(), m, dir, "rping", 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range w.Len() {
		fmt.Println(filepath.Base(w.Path(i)))
	}
	// Output:
	// rping.shard-0-of-4.pcap
	// rping.shard-1-of-4.pcap
	// rping.shard-2-of-4.pcap
	// rping.shard-3-of-4.pcap
}
