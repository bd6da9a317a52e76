package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

func cmdFioIOPS(args []string) error {
	if len(args) != 1 {
		return errors.New("fioiops FILE")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	// fio may print warnings before its JSON.
	if i := strings.IndexByte(string(b), '{'); i > 0 {
		b = b[i:]
	}
	var out struct {
		Jobs []struct {
			Read struct {
				IOPS float64 `json:"iops"`
			} `json:"read"`
			Error int `json:"error"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("fio output: %w", err)
	}
	if len(out.Jobs) == 0 {
		return errors.New("fio output: no jobs")
	}
	var iops float64
	for _, j := range out.Jobs {
		if j.Error != 0 {
			return fmt.Errorf("fio job error %d", j.Error)
		}
		iops += j.Read.IOPS
	}
	fmt.Printf("%.0f\n", iops)
	return nil
}

// cell is one tool's results in one step.
type cell struct {
	recs  []record
	wrong bool
	na    string
}

func (c *cell) values(iops bool) []float64 {
	var v []float64
	for _, r := range c.recs {
		if iops {
			v = append(v, r.IOPS)
		} else {
			v = append(v, r.WallS)
		}
	}
	slices.Sort(v)
	return v
}

func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func medianOf(recs []record, f func(record) float64) float64 {
	var v []float64
	for _, r := range recs {
		v = append(v, f(r))
	}
	slices.Sort(v)
	return median(v)
}

func cmdTable(args []string) error {
	fs := flag.NewFlagSet("table", flag.ExitOnError)
	header := fs.String("header", "", "Markdown printed before the table")
	jsonOut := fs.String("json", "", "write the records as one JSON array here")
	peers := fs.String("peers", "", "STEP=OTHER,…: STEP's peers are those of step OTHER")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("table [flags] RESULTS.jsonl")
	}
	recs, err := readRecords(fs.Arg(0))
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(recs, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	var steps, tools []string
	labels := map[string]string{}
	cells := map[[2]string]*cell{}
	for _, r := range recs {
		if !slices.Contains(steps, r.Step) {
			steps = append(steps, r.Step)
		}
		if !slices.Contains(tools, r.Tool) {
			tools = append(tools, r.Tool)
		}
		if r.Label != "" {
			labels[r.Step] = r.Label
		}
		k := [2]string{r.Step, r.Tool}
		c := cells[k]
		if c == nil {
			c = &cell{}
			cells[k] = c
		}
		switch {
		case r.NA != "":
			c.na = r.NA
		case r.OK == nil || !*r.OK || r.Exit != 0:
			c.wrong = true
		default:
			c.recs = append(c.recs, r)
		}
	}
	peerOf := map[string]string{}
	for _, kv := range strings.Split(*peers, ",") {
		if a, b, ok := strings.Cut(kv, "="); ok {
			peerOf[a] = b
		}
	}
	others := slices.DeleteFunc(slices.Clone(tools), func(t string) bool { return t == "cairn" })
	if *header != "" {
		b, err := os.ReadFile(*header)
		if err != nil {
			return err
		}
		fmt.Print(string(b))
	}
	fmt.Printf("| step | cairn: median (range) | best peer | ratio | cairn CPU s, peak RSS |")
	for _, t := range others {
		fmt.Printf(" %s: time, CPU s, peak RSS |", t)
	}
	fmt.Printf("\n|---|---|---|---|---|%s\n", strings.Repeat("---|", len(others)))
	for _, s := range steps {
		ps := s
		if p, ok := peerOf[s]; ok {
			ps = p
		}
		fmt.Println(row(s, labels[s], ps, others, cells))
	}
	return nil
}

func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}
