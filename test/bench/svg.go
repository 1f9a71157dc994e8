package main

import (
	"fmt"
	"math"
	"os"
	"strings"
)

// The fleet chart: for each engine, the engine reads per second over the run (each second, and
// each 10 s window's average) against the budget's line, with the throttling window shaded. The
// bench writes it from what it measured, as an SVG file anyone can open.

const (
	chartWidth  = 1000
	panelHeight = 230
	marginLeft  = 60
	marginRight = 20
	panelTop    = 40 // room for a panel's title
	panelBottom = 40 // room for the time axis
)

// writeFleetChart writes the chart of run to path.
func writeFleetChart(path string, run *fleetRun, budget float64, tasks, clients int) error {
	engines := []struct{ key, title string }{{"sfn", "Step Functions"}, {"temporal", "Temporal"}, {"restate", "Restate"}}
	var b strings.Builder
	height := 70 + len(engines)*(panelHeight+panelTop+panelBottom)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := fmt.Sprintf("Engine reads per second against a read budget of %g per engine", budget)
	about := fmt.Sprintf("%d tasks per engine, %d clients", tasks, clients)
	if run.throttle > 0 {
		about += fmt.Sprintf("; Step Functions and Temporal throttle %.0f%% of reads in the shaded window", run.throttle*100)
	}
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", marginLeft, escape(title))
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#555">%s.</text>`+"\n", marginLeft, escape(about))
	fmt.Fprintf(&b, `<text x="%d" y="56" fill="#555">Grey: each second; blue: each 10 s window's average; red dashes: the budget.</text>`+"\n", marginLeft)
	for i, e := range engines {
		top := 70 + i*(panelHeight+panelTop+panelBottom)
		window := run.window
		if _, throttles := run.throttled[e.key]; !throttles {
			window = [2]float64{}
		}
		panel(&b, top, e.title, run.reads.perSecond[e.key], budget, window)
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// panel draws one engine's reads from the top y.
func panel(b *strings.Builder, top int, title string, perSecond []int, budget float64, window [2]float64) {
	seconds := max(len(perSecond), 1)
	peak := budget * 1.5
	for _, n := range perSecond {
		peak = max(peak, float64(n))
	}
	step := 5.0
	if peak > 40 {
		step = 10
	}
	ymax := math.Ceil(peak/step) * step
	plotTop, plotBottom := top+panelTop, top+panelTop+panelHeight
	plotW := float64(chartWidth - marginLeft - marginRight)
	x := func(s float64) float64 { return float64(marginLeft) + s/float64(seconds)*plotW }
	y := func(v float64) float64 { return float64(plotBottom) - v/ymax*float64(panelHeight) }

	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>`+"\n", marginLeft, top+panelTop-10, escape(title))
	if window[1] > window[0] {
		fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#f5c26b" fill-opacity="0.35"/>`+"\n",
			x(window[0]), plotTop, x(window[1])-x(window[0]), panelHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="#8a5a00">engine throttling</text>`+"\n", x(window[0])+4, plotTop+14)
	}
	for v := 0.0; v <= ymax; v += step {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", marginLeft, chartWidth-marginRight, y(v), y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%g</text>`+"\n", marginLeft-6, y(v)+4, v)
	}
	tick := 30
	if seconds > 600 {
		tick = 120
	} else if seconds > 240 {
		tick = 60
	}
	for s := 0; s <= seconds; s += tick {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999"/>`+"\n", x(float64(s)), x(float64(s)), plotBottom, plotBottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%d s</text>`+"\n", x(float64(s)), plotBottom+18, s)
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#999"/>`+"\n", marginLeft, chartWidth-marginRight, plotBottom, plotBottom)
	fmt.Fprintf(b, `<text transform="translate(%d %d) rotate(-90)" text-anchor="middle" fill="#555">reads/s</text>`+"\n", 16, (plotTop+plotBottom)/2)

	var each []string
	for s, n := range perSecond {
		each = append(each, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(s)), y(float64(n)), x(float64(s+1)), y(float64(n))))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#b5b5b5" stroke-width="1"/>`+"\n", strings.Join(each, " "))
	var windows []string
	for i := 0; i+10 <= len(perSecond); i += 10 {
		sum := 0
		for _, n := range perSecond[i : i+10] {
			sum += n
		}
		avg := float64(sum) / 10
		windows = append(windows, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(i)), y(avg), x(float64(i+10)), y(avg)))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#1f5fbf" stroke-width="2.5"/>`+"\n", strings.Join(windows, " "))
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d23" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
		marginLeft, chartWidth-marginRight, y(budget), y(budget))
	fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#d23">budget %g/s</text>`+"\n", chartWidth-marginRight-4, y(budget)-5, budget)
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
