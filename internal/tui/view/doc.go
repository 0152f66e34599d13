// Package view holds iwarptui's tview primitives and draws the model onto
// them: a tview.Table over a TableContent for the record list (only the
// rows on screen are ever formatted), a TreeView for the detail tree, a
// TextView for the hex pane, tables for connections, findings and the
// message ladder, the filter bar, the prompt, the help screen and the
// status line. It holds no state of its own beyond what tview keeps
// (scroll offsets); Render copies the model's state into the primitives.
// Key bindings live in package controller.
package view
