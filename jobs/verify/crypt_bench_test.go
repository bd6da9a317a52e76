package verify

import (
	"strconv"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
)

var (
	cryptBenchOnce sync.Once
	cryptBenchKeys *store.Store
)

// BenchmarkVerifyEncrypted verifies the same 64 MiB of incompressible
// data in 4 MiB chunks side by side: plain, encrypted with the key
// (decrypted, keyed digest) and encrypted without it (CRC and sizes).
func BenchmarkVerifyEncrypted(b *testing.B) {
	s := testStore(b)
	const size = 64 << 20
	cryptBenchOnce.Do(func() {
		// the key and the keyed view live as long as the shared store,
		// for every -count round
		data := randBytes("verify crypt bench", size)
		k, err := crypt.GenerateKey()
		if err != nil {
			b.Fatal(err)
		}
		backupImageSize(b, s, store.Group{NS: "bench-plain", Type: store.TypeVM, ID: "1"}, data, benchChunk)
		crypttest.Backup(b, s, store.Group{NS: "bench-enc", Type: store.TypeVM, ID: "1"}, t0,
			crypttest.Image{Data: data, ChunkSize: benchChunk}, k)
		if cryptBenchKeys, err = store.Open(s.Root()); err != nil {
			b.Fatal(err)
		}
		cryptBenchKeys.SetKeys(store.NewKeys(k))
	})
	cases := []struct {
		name, ns string
		keyed    bool
	}{{"plain", "bench-plain", true}, {"encrypted-key", "bench-enc", true}, {"encrypted-nokey", "bench-enc", false}}
	for _, threads := range []int{1, 2} {
		for _, c := range cases {
			b.Run(c.name+"/verify-threads="+strconv.Itoa(threads), func(b *testing.B) {
				vs := s
				if c.keyed {
					vs = cryptBenchKeys
				}
				b.SetBytes(size)
				cpu := crypttest.CPUTime()
				defer func() { b.ReportMetric((crypttest.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op") }()
				for b.Loop() {
					st, rep, _ := runVerify(b, vs, map[string]string{"ns": c.ns, "chunk-order": "index",
						"verify-threads": strconv.Itoa(threads)})
					if st.State != jobs.StateOK || rep.Bytes != size {
						b.Fatalf("%s: %+v", st.State, rep)
					}
				}
			})
		}
	}
}
