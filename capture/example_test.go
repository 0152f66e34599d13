package capture_test

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/iwarpkit/iwarpkit/capture"
)

// Read a capture file and total the TCP payload per direction, stopping
// with a message naming the frame and offset if the file is damaged.
func Example() {
	s, err := capture.Open(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	octets := map[string]int{}
	for {
		p, err := s.Next()
		if err == io.EOF {
			break
		}
		var fe *capture.FileError
		if errors.As(err, &fe) {
			fmt.Printf("damaged at frame %d (offset %d): %v\n", fe.Frame, fe.Offset, err)
			break
		}
		switch p.Kind {
		case capture.KindTCP:
			// p.Payload is only valid until the next call to Next.
			octets[p.Src.String()+" > "+p.Dst.String()] += len(p.Payload)
		case capture.KindBad:
			fmt.Printf("frame %d: %v\n", p.Frame, p.Err)
		}
	}
	fmt.Println(len(octets), "directions")
	// Output: 2 directions
}

// Read a capture file into one reused Packet: NextInto fills it in place,
// so the loop copies no Packet per frame.
func ExampleSource_NextInto() {
	s, err := capture.Open(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	var p capture.Packet
	tcp := 0
	for {
		if err := s.NextInto(&p); err != nil {
			if err != io.EOF {
				fmt.Println(err)
			}
			break
		}
		if p.Kind == capture.KindTCP {
			tcp++
		}
	}
	fmt.Println(tcp > 0, p.Frame == 0) // p is zeroed at the end
	// Output: true true
}
