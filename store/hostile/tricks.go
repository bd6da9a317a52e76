package hostile

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cairnfs/cairn/store/pxar"
)

// Trick is a named crafted archive.
type Trick struct {
	Name string
	Root *Node
}

// Tricks are the archives every restore must survive. outside is a
// directory outside the restore target (absolute), holding a file
// "victim" and a directory "dir": the tricks aim their symbolic links
// and hard links there.
func Tricks(outside string) []Trick {
	victim := outside + "/victim"
	real := File("real", "real content")
	real2 := File("real", "second")
	sym := Symlink("s", victim)
	return []Trick{
		{"symlink then directory", Dir("", Symlink("a", outside), Dir("a", File("f", "pwned")))},
		{"symlink to a file then file", Dir("", Symlink("a", victim), File("a", "pwned"))},
		{"file then directory", Dir("", File("a", "x"), Dir("a", File("f", "pwned")))},
		{"directory then file", Dir("", Dir("a", File("f", "x")), File("a", "pwned"))},
		{"directory twice", Dir("", Dir("a", File("f", "1")), Dir("a", File("g", "2")))},
		{"relative symlink then directory", Dir("", Symlink("a", "../outside/dir"), Dir("a", File("f", "pwned")))},
		{"symlink in a subdirectory then directory", Dir("", Dir("d", Symlink("x", "../../outside"), Dir("x", Dir("y", File("f", "pwned")))))},
		{"hard link through a symlink", Dir("", Symlink("s", outside), real, Hardlink("h", "s/victim", real))},
		{"hard link absolute", Dir("", real, Hardlink("h", victim, real))},
		{"hard link dot-dot", Dir("", real, Hardlink("h", "../outside/victim", real))},
		{"hard link dot-dot inside", Dir("", Dir("d", real), Hardlink("h", "d/../../outside/victim", real))},
		{"hard link through a replaced directory", Dir("", Dir("d", real2), Symlink("d", outside), Hardlink("h", "d/real", real2))},
		{"hard link to itself", Dir("", Hardlink("h", "h", nil))},
		{"hard link to a symlink", Dir("", sym, Hardlink("h", "s", sym))},
		{"name with a slash", Dir("", File("../outside/victim", "pwned"))},
		{"name dot-dot", Dir("", Dir("..", File("victim", "pwned")))},
		{"name dot", Dir("", Dir(".", File("f", "x")))},
		{"empty name", Dir("", File("", "x"))},
		{"name with NUL", Dir("", File("a\x00b", "x"))},
		{"devices and fifos", Dir("", dev("null", 1, 3, false), dev("blk", 7, 0, true),
			&Node{Name: "fifo", Kind: pxar.KindFIFO, Mode: 0o640}, &Node{Name: "sock", Kind: pxar.KindSocket, Mode: 0o600})},
		{"symlink then device", Dir("", Symlink("n", victim), dev("n", 1, 3, false))},
		{"setuid file", Dir("", &Node{Name: "s", Kind: pxar.KindFile, Mode: 0o4755, Data: []byte("#!/bin/sh\n")})},
		{"deep tree", Deep(24, 200)},
		// no trick in the archive: for --overwrite into a target whose
		// names are symbolic links pointing outside
		{"plain tree", Dir("", Dir("a", File("f", "new")), File("b", "new"), Dir("x", File("y", "new")), File("real", "new"))},
	}
}

func dev(name string, major, minor uint64, block bool) *Node {
	return &Node{Name: name, Kind: pxar.KindDevice, Mode: 0o644, Dev: pxar.Device{Major: major, Minor: minor}, Block: block}
}

// Deep is a chain of depth directories with names of nameLen bytes and a
// file at the bottom: with depth·(nameLen+1) beyond 4096 its path is
// longer than PATH_MAX.
func Deep(depth, nameLen int) *Node {
	leaf := File("leaf", "bottom")
	for i := depth; i > 0; i-- {
		name := fmt.Sprintf("%03d", i) + strings.Repeat("d", max(0, nameLen-3))
		leaf = Dir(name, leaf)
	}
	return Dir("", leaf)
}

// Random builds a random hostile tree from seed: a few levels of a few
// entries, names drawn from a small set (so they repeat) with now and
// then an invalid one, symbolic links to outside (absolute, relative,
// through ".."), hard links recording true paths, paths through symbolic
// links, absolute and ".." paths, devices, FIFOs and odd modes.
func Random(seed uint64, outside string) *Node {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x686f7374)), outside: outside}
	root := Dir("")
	g.fill(root, "", 0)
	return root
}

type gen struct {
	r       *rand.Rand
	outside string
	files   []placed // regular files written so far
}

type placed struct {
	n    *Node
	path string
}

var names = []string{"a", "b", "c", "victim", "dir", "x"}

var badNames = []string{"", ".", "..", "a/b", "../outside", "/abs", "n\x00ul"}

func (g *gen) name() string {
	if g.r.IntN(40) == 0 {
		return badNames[g.r.IntN(len(badNames))]
	}
	return names[g.r.IntN(len(names))]
}

func (g *gen) target() string {
	switch g.r.IntN(5) {
	case 0:
		return g.outside
	case 1:
		return g.outside + "/victim"
	case 2:
		return "../outside/dir"
	case 3:
		return strings.Repeat("../", 1+g.r.IntN(6)) + "outside"
	}
	return names[g.r.IntN(len(names))]
}

func (g *gen) fill(d *Node, path string, depth int) {
	n := 1 + g.r.IntN(6)
	for range n {
		name := g.name()
		p := name
		if path != "" {
			p = path + "/" + name
		}
		var k *Node
		switch c := g.r.IntN(16); {
		case c < 4 && depth < 4:
			k = Dir(name)
			k.Mode = uint64([]int{0o755, 0o700, 0o500, 0o777, 0o1777}[g.r.IntN(5)])
			d.Kids = append(d.Kids, k)
			g.fill(k, p, depth+1)
			continue
		case c < 8:
			k = File(name, fmt.Sprintf("content %d", g.r.Uint32()))
			k.Mode = uint64([]int{0o644, 0o600, 0o4755, 0o2755, 0o444, 0}[g.r.IntN(6)])
			g.files = append(g.files, placed{k, p})
		case c < 11:
			k = Symlink(name, g.target())
		case c < 13 && len(g.files) > 0:
			k = g.hardlink(name)
		case c < 14:
			k = dev(name, 1, 3, g.r.IntN(2) == 0)
		case c < 15:
			k = &Node{Name: name, Kind: pxar.KindFIFO, Mode: 0o644}
		default:
			k = &Node{Name: name, Kind: pxar.KindSocket, Mode: 0o600}
		}
		k.UID, k.GID = uint32(g.r.IntN(3)*1000), uint32(g.r.IntN(3)*1000)
		k.Mtime = int64(g.r.Uint32())
		d.Kids = append(d.Kids, k)
	}
}

// hardlink links to a random earlier file, recording its true path or a
// hostile one.
func (g *gen) hardlink(name string) *Node {
	to := g.files[g.r.IntN(len(g.files))]
	path := to.path
	switch g.r.IntN(6) {
	case 0:
		path = g.outside + "/victim"
	case 1:
		path = "../outside/victim"
	case 2:
		path = names[g.r.IntN(len(names))] + "/" + path
	case 3:
		path = "x/../" + path
	}
	return Hardlink(name, path, to.n)
}
