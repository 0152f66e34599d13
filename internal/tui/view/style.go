package view

import (
	"github.com/gdamore/tcell/v2"

	"github.com/iwarpkit/iwarpkit/internal/tui/model"
)

// KindColor is the list colour of each record kind.
var KindColor = map[model.Kind]tcell.Color{
	model.KindOther:     tcell.ColorSilver,
	model.KindMPA:       tcell.ColorAqua,
	model.KindSend:      tcell.ColorLime,
	model.KindWrite:     tcell.ColorYellow,
	model.KindRead:      tcell.ColorFuchsia,
	model.KindTerminate: tcell.ColorWhite,
	model.KindFinding:   tcell.ColorRed,
	model.KindConn:      tcell.ColorGray,
	model.KindWarning:   tcell.ColorOrange,
}

// kindStyle returns the style of a list row of kind k: its colour, and for
// Terminates a red background.
func kindStyle(k model.Kind) tcell.Style {
	st := tcell.StyleDefault.Foreground(KindColor[k]).Background(tcell.ColorBlack)
	if k == model.KindTerminate {
		st = st.Background(tcell.ColorMaroon)
	}
	return st
}

// Hex pane colours, as tview style tags, by octet class.
var classTag = map[model.Class]string{
	model.ClassNone:    "[silver:black]",
	model.ClassLength:  "[lime:black]",
	model.ClassHeader:  "[white:black]",
	model.ClassPayload: "[silver:black]",
	model.ClassPad:     "[gray:black]",
	model.ClassCRC:     "[aqua:black]",
	model.ClassMarker:  "[white:purple]",
	model.ClassMPA:     "[teal:black]",
}

// Highlighted octets: black on yellow, markers among them black on fuchsia.
const (
	hiTag       = "[black:yellow]"
	hiMarkerTag = "[black:fuchsia]"
)

// Legend explains the hex pane's colours.
const Legend = "[lime:black]len[-:-] [white:black]hdr[-:-] [silver:black]data[-:-] [gray:black]pad[-:-] [aqua:black]crc[-:-] [white:purple]marker[-:-] [black:yellow]field[-:-]"
