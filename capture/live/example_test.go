package live_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/iwarpkit/iwarpkit/capture/live"
)

// Capture iWARP traffic on port 7174 of the loopback interface until
// Ctrl-C, then print tcpdump's statistics.
func Example() {
	h, err := live.Open(live.Options{Interface: "lo", FilterExpr: "tcp port 7174"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // e.g. "lo: you don't have permission to capture on that device (socket: operation not permitted)"
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src, err := live.NewSource(ctx, h)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer src.Close()
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		fmt.Println(p.Frame, p.Src, ">", p.Dst, len(p.Payload))
	}
	if err := h.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err) // the interface went away
	}
	st, _ := h.Stats()
	fmt.Printf("%d packets captured\n%d packets received by filter\n%d packets dropped by kernel\n", src.Captured(), st.Received, st.Dropped)
}
