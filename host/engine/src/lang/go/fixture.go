package geo

import (
	"fmt"
	str "strings"
	"net/http"
)

// Max is the limit.
const Max = 10

var registry = map[string]int{}

// Point is a point.
// It has two coordinates.
type Point struct {
	X, Y int
	Tag  *http.Request
}

type Shape interface {
	Area() float64
}

type ID = string

// Move moves the point.
func (p *Point) Move(dx int) Point {
	p.X += dx
	p.check()
	return Point{X: p.X, Y: Max}
}

func Run[T any](items []T) error {
	q := &Point{}
	q.Move(1)
	fmt.Println(str.ToUpper("a"), registry)
	for _, it := range items {
		helper(it)
	}
	return nil
}
