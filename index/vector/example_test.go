package vector_test

import (
	"fmt"

	"github.com/ctxd/ctxd/index/vector"
)

func ExampleIndex_Search() {
	x := vector.New(3)
	_ = x.Upsert(1, []float32{1, 0, 0})
	_ = x.Upsert(2, []float32{0.8, 0.6, 0})
	_ = x.Upsert(3, []float32{0, 0, 1})

	hits, _ := x.Search([]float32{1, 0.1, 0}, 2, nil)
	for _, h := range hits {
		fmt.Printf("%d %.3f\n", h.ID, h.Score)
	}

	// A filter is applied inside the scan: id 3 is found although it ranks last.
	onlyThree := vector.FilterFunc(func(id uint64) bool { return id == 3 })
	hits, _ = x.Search([]float32{1, 0.1, 0}, 2, onlyThree)
	fmt.Println(hits)
	// Output:
	// 1 0.995
	// 2 0.856
	// [{3 0}]
}
