package crypt

import (
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Manifest signature errors, matched with errors.Is.
var (
	// ErrCanonical: a document PBS's canonical JSON cannot express (not
	// JSON, a null, a non-integer number, invalid UTF-8).
	ErrCanonical = errors.New("manifest is not canonicalisable JSON")
	// ErrSignature: the manifest's signature does not match its
	// protected part under the key.
	ErrSignature = errors.New("manifest signature does not verify")
	// ErrUnsigned: the manifest has no signature.
	ErrUnsigned = errors.New("manifest is not signed")
	// ErrWrongKey: the manifest names another key's fingerprint.
	ErrWrongKey = errors.New("manifest was made with another key")
)

// maxManifestDepth bounds the nesting a hostile manifest may use.
const maxManifestDepth = 64

// CanonicalJSON writes doc (one JSON value) as PBS's to_canonical_json
// does: object keys sorted bytewise, no whitespace, strings escaped as
// serde_json escapes them (", \, \b \f \n \r \t, other control
// characters as \u00xx, everything else raw UTF-8). A null is an error, as
// in PBS; so are numbers other than integers (a manifest has none, and
// serde_json's float spelling is not reproduced).
func CanonicalJSON(doc []byte) ([]byte, error) {
	v, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := writeCanonical(&out, v, 0); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func decodeJSON(doc []byte) (any, error) {
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrCanonical)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCanonical, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the JSON value", ErrCanonical)
	}
	return v, nil
}

var integer = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

func writeCanonical(out *bytes.Buffer, v any, depth int) error {
	if depth > maxManifestDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrCanonical, maxManifestDepth)
	}
	switch val := v.(type) {
	case nil:
		return fmt.Errorf("%w: unexpected null value", ErrCanonical)
	case bool:
		out.WriteString(strconv.FormatBool(val))
	case json.Number:
		s := string(val)
		_, errI := strconv.ParseInt(s, 10, 64)
		_, errU := strconv.ParseUint(s, 10, 64)
		if !integer.MatchString(s) || s == "-0" || (errI != nil && errU != nil) {
			return fmt.Errorf("%w: number %.40s is not a 64-bit integer", ErrCanonical, s)
		}
		out.WriteString(s)
	case string:
		writeCanonicalString(out, val)
	case []any:
		out.WriteByte('[')
		for i, item := range val {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := writeCanonical(out, item, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		slices.Sort(keys) // bytewise, as Rust sorts &str
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			writeCanonicalString(out, k)
			out.WriteByte(':')
			if err := writeCanonical(out, val[k], depth+1); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	default:
		return fmt.Errorf("%w: unexpected %T", ErrCanonical, v)
	}
	return nil
}

// writeCanonicalString quotes s as serde_json does.
func writeCanonicalString(out *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if c < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hexDigits[c>>4])
				out.WriteByte(hexDigits[c&15])
			} else {
				out.WriteByte(c)
			}
		}
	}
	out.WriteByte('"')
}

// ManifestSignature is PBS's BackupManifest::json_signature: the auth tag
// (HMAC-SHA256 with id_key) of the canonical JSON of the manifest without
// its top-level "unprotected" and "signature" members. PBS stores it hex
// encoded in "signature".
func (k *Key) ManifestSignature(manifest []byte) ([32]byte, error) {
	if !k.usable() {
		return [32]byte{}, ErrNoKey
	}
	v, err := decodeJSON(manifest)
	if err != nil {
		return [32]byte{}, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return [32]byte{}, fmt.Errorf("%w: manifest is not a JSON object", ErrCanonical)
	}
	delete(obj, "unprotected")
	delete(obj, "signature")
	var out bytes.Buffer
	if err := writeCanonical(&out, obj, 0); err != nil {
		return [32]byte{}, err
	}
	return k.AuthTag(out.Bytes()), nil
}

// VerifyManifest checks a manifest as PBS's BackupManifest::from_data does
// with a key: when unprotected.key-fingerprint is present it must be this
// key's (ErrWrongKey), and the hex "signature" must equal
// ManifestSignature (ErrSignature; ErrUnsigned when there is none: PBS
// accepts an unsigned manifest, the caller decides).
func (k *Key) VerifyManifest(manifest []byte) error {
	var m struct {
		Signature   *string `json:"signature"`
		Unprotected struct {
			Fingerprint *string `json:"key-fingerprint"`
		} `json:"unprotected"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return fmt.Errorf("%w: %v", ErrCanonical, err)
	}
	if m.Unprotected.Fingerprint != nil {
		fp, err := ParseFingerprint(*m.Unprotected.Fingerprint)
		if err != nil {
			return err
		}
		if fp != k.Fingerprint() {
			return fmt.Errorf("%w: manifest's key %s, given key %s", ErrWrongKey, fp.Short(), k.Fingerprint().Short())
		}
	}
	if m.Signature == nil {
		return ErrUnsigned
	}
	want, err := k.ManifestSignature(manifest)
	if err != nil {
		return err
	}
	got, err := hex.DecodeString(*m.Signature)
	if err != nil || !hmac.Equal(got, want[:]) {
		return ErrSignature
	}
	return nil
}
