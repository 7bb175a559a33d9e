package main

// spawn-tree: a 10-ary tree over N leaves. Every node starts a goroutine per child
// (one per tenth of its range) and collects their sums from one channel per parent,
// buffered so that no child blocks; a leaf (a range of one) sends its number.
// The result is 0 + 1 + ... + (N-1).

const treeFanOut = 10

func spawnTree(cfg config) (result, expected int64) {
	out := make(chan int64, 1)
	treeNode(0, int64(cfg.n), out)
	n := int64(cfg.n)
	return <-out, n * (n - 1) / 2
}

func treeNode(lo, count int64, out chan<- int64) {
	if count == 1 {
		out <- lo
		return
	}
	parts := int64(treeFanOut)
	if count < parts {
		parts = count
	}
	results := make(chan int64, parts)
	for i := int64(0); i < parts; i++ {
		start := lo + count*i/parts
		end := lo + count*(i+1)/parts
		go treeNode(start, end-start, results)
	}
	var sum int64
	for i := int64(0); i < parts; i++ {
		sum += <-results
	}
	out <- sum
}
