package report_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/iwarpkit/iwarpkit/dissect"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/report"
)

// Example decodes a capture, feeds every record to a Collector and prints
// the opcode histogram (tshark counts 5 RDMA Writes, 5 Read Requests, 5
// Read Responses and 20 Sends in this rping capture).
func Example() {
	src, err := capture.Open("../testdata/siw/basic_rping_v2_nocrc.pcap")
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	c := report.NewCollector()
	dec := flows.NewDecoder(flows.Options{}, c.Add)
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		dec.Packet(&p)
	}
	dec.Close()
	if err := c.WriteOps(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ===============================================================
	// RDMAP opcodes per direction (-z ops)
	// ===============================================================
	// Conn  Dir  Opcode  Name                Segments  Payload octets
	//    0  i2r  0x2     RDMA Read Response         5             320
	//    0  i2r  0x3     Send                      10             160
	//    0  r2i  0x0     RDMA Write                 5             320
	//    0  r2i  0x1     RDMA Read Request          5               0
	//    0  r2i  0x3     Send                      10             160
	//  all  all  0x0     RDMA Write                 5             320
	//  all  all  0x1     RDMA Read Request          5               0
	//  all  all  0x2     RDMA Read Response         5             320
	//  all  all  0x3     Send                      20             320
	// ===============================================================
}

// ExampleCollector_Worst decides an exit status the way --fail-on does:
// 1 when a finding reaches the level, 0 otherwise.
func ExampleCollector_Worst() {
	c := report.NewCollector()
	c.Add(&flows.Record{Type: flows.RecFinding, Frame: 11, Finding: &dissect.Finding{
		Severity: dissect.SeverityWarning, Code: "mpa.rev_unknown", Msg: "unknown revision 3", Ref: "RFC 5044 §7.1.1"}})
	for _, failOn := range []dissect.Severity{dissect.SeverityNote, dissect.SeverityWarning, dissect.SeverityError} {
		exit := 0
		if worst, ok := c.Worst(); ok && worst >= failOn {
			exit = 1
		}
		fmt.Printf("--fail-on %s: exit %d\n", failOn, exit)
	}
	// Output:
	// --fail-on note: exit 1
	// --fail-on warning: exit 1
	// --fail-on error: exit 0
}
