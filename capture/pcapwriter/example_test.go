package pcapwriter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture/pcapwriter"
)

func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "pcapwriter")
	defer os.RemoveAll(dir)
	// tcpdump -w cap -C 1 -W 4: files of about 1 MB, reused in a ring.
	w, err := pcapwriter.Create(filepath.Join(dir, "cap"), pcapwriter.Options{
		LinkType: layers.LinkTypeEthernet,
		FileSize: 1_000_000,
		MaxFiles: 4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	frame := make([]byte, 60)
	for i := 0; i < 3; i++ {
		_ = w.WritePacket(time.Unix(int64(i), 0), frame, len(frame))
	}
	fmt.Println(filepath.Base(w.Name()), w.Close())
	// Output: cap0 <nil>
}
