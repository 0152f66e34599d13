package parquetout_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/parquetout"
)

// Decode a capture into Parquet tables, as iwarpdump -T parquet -w DIR
// does.
func ExampleSink() {
	dir, _ := os.MkdirTemp("", "tables")
	defer os.RemoveAll(dir)
	src, err := capture.Open(filepath.Join("..", "testdata", "siw", "crc_v2_rping.pcap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	sink, err := parquetout.Create(dir, "rping", parquetout.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	dec := flows.NewDecoder(flows.Options{}, sink.Add)
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sink.Abort()
			fmt.Println(err)
			return
		}
		dec.Packet(&p)
	}
	dec.Close()
	if err := sink.Close(); err != nil {
		fmt.Println(err)
		return
	}
	rows := sink.Rows()
	for _, t := range parquetout.Tables {
		rel, _ := filepath.Rel(dir, parquetout.Path(dir, t, "rping"))
		fmt.Println(rel, rows[t] > 0 || t == parquetout.TableFindings)
	}
	// Output:
	// mpa/rping.parquet true
	// fpdus/rping.parquet true
	// messages/rping.parquet true
	// findings/rping.parquet true
	// conns/rping.parquet true
}
