package rowtest

import (
	"encoding/json"
	"testing"
)

func TestCanon(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{json.Number("42"), "42"},
		{int64(-7), "-7"},
		{uint64(1 << 63), "9223372036854775808"},
		{true, "true"},
		{"a\"b", `"a\"b"`},
		{[]any{int64(1), "x"}, `[1,"x"]`},
		{map[string]any{"b": int64(2), "a": nil, "c": []any{}}, "{b:2,c:[]}"},
		{1.5, "?float64(1.5)"},
	} {
		if got := Canon(c.v); got != c.want {
			t.Errorf("Canon(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestJSONRowAndJoin(t *testing.T) {
	row, err := JSONRow([]byte(`{"v":1,"rdmap.read":{"sink_stag":5,"captured":4},"x":null,"frames":[1,2],"s":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	const want = `frames=[1,2];rdmap.read.captured=4;rdmap.read.sink_stag=5;s="q";v=1;`
	if got := Join(row); got != want {
		t.Errorf("Join(JSONRow) = %s, want %s", got, want)
	}
	if _, err := JSONRow([]byte(`{"v":`)); err == nil {
		t.Error("JSONRow of a cut line: no error")
	}
}
