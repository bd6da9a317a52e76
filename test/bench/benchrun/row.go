package main

import (
	"fmt"
	"strings"
)

// row formats one step: cairn's median and range, the best peer (taken
// from step peerStep), cairn's speed relative to it (>1: cairn is
// faster), cairn's CPU and RSS, and every peer's cell.
func row(step, label, peerStep string, others []string, cells map[[2]string]*cell) string {
	if label == "" {
		label = step
	}
	c := cells[[2]string{step, "cairn"}]
	iops := isIOPS(c) || isIOPS(firstOf(peerStep, others, cells))
	cols := []string{label, "—", "—", "—", "—"}
	var cairnMed float64
	if c != nil {
		cols[1] = status(c)
		if cols[1] == "" {
			v := c.values(iops)
			cairnMed = median(v)
			cols[1] = fmt.Sprintf("%s (%s–%s)%s", num(cairnMed, iops), bare(v[0], iops), bare(v[len(v)-1], iops), rate(c, cairnMed, iops))
			cols[4] = cpuRSS(c)
		}
	}
	best, bestMed := "", 0.0
	for _, t := range others {
		p := cells[[2]string{peerStep, t}]
		if p == nil || status(p) != "" {
			continue
		}
		m := median(p.values(iops))
		if best == "" || (iops && m > bestMed) || (!iops && m < bestMed) {
			best, bestMed = t, m
		}
	}
	if best != "" {
		cols[2] = best + " " + num(bestMed, iops)
		if cairnMed > 0 && bestMed > 0 {
			r := bestMed / cairnMed
			if iops {
				r = cairnMed / bestMed
			}
			cols[3] = fmt.Sprintf("%.2f×", r)
		}
	}
	for _, t := range others {
		p := cells[[2]string{step, t}]
		switch {
		case p == nil && peerStep != step:
			cols = append(cols, "(as above)")
		case p == nil:
			cols = append(cols, "—")
		case status(p) != "":
			cols = append(cols, status(p))
		default:
			cols = append(cols, num(median(p.values(iops)), iops)+", "+cpuRSS(p))
		}
	}
	return "| " + strings.Join(cols, " | ") + " |"
}

func firstOf(step string, tools []string, cells map[[2]string]*cell) *cell {
	for _, t := range tools {
		if c := cells[[2]string{step, t}]; c != nil {
			return c
		}
	}
	return nil
}

func isIOPS(c *cell) bool { return c != nil && len(c.recs) > 0 && c.recs[0].IOPS > 0 }

func status(c *cell) string {
	switch {
	case c.wrong:
		return "**WRONG RESULT**"
	case c.na != "":
		return "n/a (" + c.na + ")"
	case len(c.recs) == 0:
		return "—"
	}
	return ""
}

func num(v float64, iops bool) string {
	if iops {
		if v >= 1000 {
			return fmt.Sprintf("%.1fk IOPS", v/1000)
		}
		return fmt.Sprintf("%.0f IOPS", v)
	}
	return fmt.Sprintf("%.2f s", v)
}

// bare is num without the unit.
func bare(v float64, iops bool) string {
	s := num(v, iops)
	return s[:strings.LastIndexByte(s, ' ')]
}

// rate is ", N MB/s" for a timed step that processes a known byte count.
func rate(c *cell, med float64, iops bool) string {
	if iops || c.recs[0].Bytes == 0 || med <= 0 {
		return ""
	}
	return fmt.Sprintf(", %.0f MB/s", float64(c.recs[0].Bytes)/med/1e6)
}

func cpuRSS(c *cell) string {
	cpu := medianOf(c.recs, func(r record) float64 { return r.CPUS })
	rss := medianOf(c.recs, func(r record) float64 { return float64(r.RSSKiB) })
	return fmt.Sprintf("%.2f CPU-s, %.0f MiB", cpu, rss/1024)
}
