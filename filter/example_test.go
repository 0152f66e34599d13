package filter_test

import (
	"errors"
	"fmt"

	"github.com/iwarpkit/iwarpkit/filter"
	"github.com/iwarpkit/iwarpkit/format"
)

func ExampleCompile() {
	// Wireshark's names are accepted; String gives the canonical form.
	f, err := filter.Compile("iwarp_rdma.opcode == 2 and iwarp_ddp.stag eq 4096")
	if err != nil {
		panic(err)
	}
	fmt.Println(f)

	// A record as format.Fields returns it (shortened).
	rec := []format.KV{
		{Key: "type", Val: format.Str("fpdu")},
		{Key: "ddp.t", Val: format.Bool(true)},
		{Key: "ddp.stag", Val: format.Uint(4096)},
		{Key: "rdmap.opcode", Val: format.Uint(2)},
	}
	fmt.Println(f.Match(rec))
	// Output:
	// rdmap.opcode == 2 && ddp.stag == 0x1000
	// true
}

func ExampleSyntaxError() {
	expr := `ddp.t == 1 && rdmap.opcod == 2`
	_, err := filter.Compile(expr)
	var se *filter.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se)
		fmt.Println(se.Caret(expr))
	}
	// Output:
	// filter: col 15: unknown field "rdmap.opcod" (did you mean "rdmap.opcode"?)
	// ddp.t == 1 && rdmap.opcod == 2
	//               ^
}
