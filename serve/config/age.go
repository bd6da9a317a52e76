package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxAgeDays bounds max_age (ten years).
const maxAgeDays = 3660

var errAge = errors.New(`want a duration such as "26h", "2d" or "1d12h"`)

// parseAge parses a Go duration ("26h", "90m") that may begin with
// whole days ("2d", "1d12h"). It must be above zero and at most ten
// years.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	rest := s
	if days, after, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > maxAgeDays || strings.HasPrefix(days, "+") {
			return 0, errAge
		}
		d = time.Duration(n) * 24 * time.Hour
		rest = after
	}
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || r < 0 {
			return 0, errAge
		}
		d += r
	}
	if d <= 0 || d > maxAgeDays*24*time.Hour {
		return 0, fmt.Errorf("%w, above 0 and at most %d days", errAge, maxAgeDays)
	}
	return d, nil
}
