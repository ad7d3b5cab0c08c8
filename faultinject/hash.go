package faultinject

import "hash/fnv"

// kindStream separates the "which kind" draw from the "fault or not" draw
// taken from the same key hash (it is the SplitMix64 increment).
const kindStream = 0x9e3779b97f4a7c15

// hashKey mixes the seed and the three key parts one after the other, so
// that ("ab", "c") and ("a", "bc") hash differently.
func hashKey(seed uint64, k Key) uint64 {
	h := splitmix64(seed)
	h = splitmix64(h ^ fnv64a(k.Tool))
	h = splitmix64(h ^ fnv64a(k.Invocation))
	return splitmix64(h ^ uint64(k.Attempt))
}

func fnv64a(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // hash.Hash.Write never fails
	return h.Sum64()
}

// splitmix64 is the SplitMix64 finaliser (Steele, Lea, Flood 2014): a
// bijective mix whose output bits are close to independent of the input's.
func splitmix64(x uint64) uint64 {
	x += kindStream
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps the top 53 bits of h to a float in [0, 1).
func unitFloat(h uint64) float64 {
	return float64(h>>11) / (1 << 53)
}
