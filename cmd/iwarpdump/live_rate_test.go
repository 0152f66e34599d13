//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/synth"
)

// TestLiveRateGenerator is the traffic source of scripts/live_rate.sh, not
// a test: with IWARP_RATE_BPS set it runs an iWARP connection over
// 127.0.0.1:7174 at that many octets a second for IWARP_RATE_SECONDS
// (default 3), and prints the rate it achieved. The connection is synth's
// rev2-enhanced MPA exchange (CRC on) followed by RDMA Writes of 16 KiB
// (bulk transfer, as ib_write_bw), repeated; IWARP_RATE_SCENARIO=NAME
// repeats the FPDUs of a synth library scenario instead.
func TestLiveRateGenerator(t *testing.T) {
	rateS := os.Getenv("IWARP_RATE_BPS")
	if rateS == "" {
		t.Skip("traffic generator for scripts/live_rate.sh (set IWARP_RATE_BPS)")
	}
	rate, err := strconv.ParseFloat(rateS, 64)
	if err != nil || rate <= 0 {
		t.Fatalf("IWARP_RATE_BPS=%q", rateS)
	}
	secs := 3.0
	if s := os.Getenv("IWARP_RATE_SECONDS"); s != "" {
		secs, _ = strconv.ParseFloat(s, 64)
	}
	chunk := 64 << 10
	if s := os.Getenv("IWARP_RATE_WRITE"); s != "" {
		chunk, _ = strconv.Atoi(s)
	}
	var s streams
	if name := os.Getenv("IWARP_RATE_SCENARIO"); name != "" {
		s = synthStreams(t, name)
	} else {
		sc, _ := synth.Named("rev2-enhanced", 1)
		var ops []synth.Op
		for i := 0; i < 64; i++ {
			ops = append(ops, synth.Op{Dir: synth.I2R, Kind: synth.Write, Size: 16 << 10, STag: 0x1000, TO: uint64(i) << 14})
		}
		sc.Conns[0].Ops = ops
		s = scenarioStreams(t, "writes", sc)
	}
	// The FPDUs after the MPA Request, repeated whole to at least 1 MiB,
	// twice over so that any window of it is contiguous.
	unit := s.i2r[s.reqLen:]
	var body []byte
	for len(body) < 1<<20 {
		body = append(body, unit...)
	}
	ring := append(append([]byte(nil), body...), body...)

	ln, err := net.Listen("tcp4", "127.0.0.1:7174")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		if _, err := io.ReadFull(c, make([]byte, s.reqLen)); err != nil {
			done <- err
			return
		}
		if _, err := c.Write(s.r2i[:s.repLen]); err != nil {
			done <- err
			return
		}
		_, err = io.Copy(io.Discard, c)
		done <- err
	}()
	c, err := net.Dial("tcp4", "127.0.0.1:7174")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(s.i2r[:s.reqLen]); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, s.repLen)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sent, off := 0, 0
	for {
		el := time.Since(start).Seconds()
		if el >= secs {
			break
		}
		if float64(sent) >= rate*el {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		n, err := c.Write(ring[off : off+chunk])
		if err != nil {
			t.Fatal(err)
		}
		sent += n
		off = (off + n) % len(body)
	}
	el := time.Since(start).Seconds()
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fmt.Printf("achieved %d octets in %.3f s = %.1f MB/s\n", sent, el, float64(sent)/el/1e6)
}
