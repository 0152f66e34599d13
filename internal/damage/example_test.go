package damage_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/iwarpkit/iwarpkit/internal/damage"
)

// Variants cycles through the kinds of damage; a variant is reproduced from
// its seed and index with Generate.
func ExampleVariants() {
	files, _ := filepath.Glob("../../testdata/synth/*.pcap")
	var sources [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		sources = append(sources, b)
	}
	vs := damage.Variants(1, 4, sources)
	for _, v := range vs {
		fmt.Println(v.Kind)
	}
	again := damage.Generate(1, 3, sources)
	fmt.Println(again.Name == vs[3].Name)
	// Output:
	// bitflip
	// payload-flip
	// payload-random
	// header-flip
	// true
}
