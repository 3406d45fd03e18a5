# peers.gp: grouped bars of the median CPU time of each case per implementation
# (make bench-peers): the programs, then the empty program and the small program.
# Input: results/peers.dat from bench/peers_bench.sh: a header line (case, then one
# implementation a column), then "label" and one value a column, ? for a missing value.
# Run: gnuplot -e "datafile='bench/results/peers.dat'; outfile='bench/results/peers.png'; nimpls=5" bench/peers.gp
# (plottitle='...' for another title: make bench-calls).
if (!exists("datafile")) datafile = 'bench/results/peers.dat'
if (!exists("outfile")) outfile = 'bench/results/peers.png'
if (!exists("nimpls")) nimpls = 5

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1500,620 font ",10" noenhanced
} else {
  set terminal png size 1500,620 noenhanced
}
set output outfile
if (!exists("plottitle")) plottitle = "Minnow against other runtimes: median CPU time a run (lower is better; the last two groups are start-up rows)"
set title plottitle
set ylabel "CPU seconds (log scale)"
set logscale y
set format y "%g"
set grid ytics mytics
set key outside top center horizontal samplen 2 width 2
set bmargin 4
set offsets 0.3, 0.3, 0, 0
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror scale 0
set datafile missing "?"
set key autotitle columnheader
# Bars of a cluster of n with gap 1 sit at x = row + (column - 2 - (n - 1) / 2) / (n + 1).
# Labels: seconds with 3 significant digits (under 0.1 s: milliseconds).
label(v) = (v < 0.1) ? sprintf("%.3gms", v * 1000) : sprintf("%.3g", v)
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b"
plot for [c=2:nimpls+1] datafile using c:xtic(1) linecolor rgb word(colors, c - 1), \
     for [c=2:nimpls+1] '' using ($0 + (c - 2 - (nimpls - 1) / 2.0) / (nimpls + 1.0)):c:(label(column(c))) \
       with labels rotate by 90 left offset 0, 0.4 font ",7" notitle
