package objstore

import "time"

// SetPutThresholds lowers PutReader's single-PUT maximum and part size
// (tests of multipart uploads with small objects) until restore.
func SetPutThresholds(single, part int64) (restore func()) {
	s, p := singlePutMax, minPartSize
	singlePutMax, minPartSize = single, part
	return func() { singlePutMax, minPartSize = s, p }
}

// LocalNode is this machine's node as leases record it.
var LocalNode = localNode

// TimeoutFor is the bound of one attempt of a request moving size bytes.
func TimeoutFor(b *Bucket, size int64) time.Duration { return b.timeoutFor(size) }
