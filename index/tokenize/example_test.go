package tokenize_test

import (
	"fmt"
	"log"

	"github.com/ctxd/ctxd/index/tokenize"
)

func Example() {
	// testdata holds a tiny vocab.txt; real use loads the model directory.
	tk, err := tokenize.Load("testdata")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tk.Tokens("Unaffable, naïve CAFÉ!"))
	fmt.Println(tk.Count("Unaffable, naïve CAFÉ!"))
	fmt.Println(tk.Encode("Unaffable, naïve CAFÉ!", 5))
	// Output:
	// [un ##aff ##able , naive cafe !]
	// 7
	// [2 9 10 11 3]
}
