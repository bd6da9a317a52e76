package format

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// UUID is a 16-byte identifier, written in JSON as PBS writes it
// (lower-case, hyphenated).
type UUID [16]byte

// NewUUID returns a random (version 4) UUID.
func NewUUID() UUID {
	var u UUID
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// IsZero reports whether u is all zeros (PBS: an unassigned media set).
func (u UUID) IsZero() bool { return u == UUID{} }

// String returns the canonical form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// ParseUUID parses the canonical form (or 32 hex digits).
func ParseUUID(s string) (UUID, error) {
	var u UUID
	h := make([]byte, 0, 32)
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23) && len(s) == 36 {
			continue
		}
		h = append(h, s[i])
	}
	if len(h) != 32 {
		return u, fmt.Errorf("uuid %q: wrong length", s)
	}
	if _, err := hex.Decode(u[:], h); err != nil {
		return u, fmt.Errorf("uuid %q: %w", s, err)
	}
	return u, nil
}

// MarshalJSON writes the canonical string.
func (u UUID) MarshalJSON() ([]byte, error) { return json.Marshal(u.String()) }

// UnmarshalJSON reads the canonical string.
func (u *UUID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseUUID(s)
	if err != nil {
		return err
	}
	*u = v
	return nil
}
