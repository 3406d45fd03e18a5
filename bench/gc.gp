# gc.gp: grouped bars of the median wall time of each benchmark case per implementation.
# Input: the table bench/gc_bench.sh writes (header line, then "label" vm vm-boehm lua5.4,
# ? for a missing value). Run: gnuplot -e "datafile='bench/results/gc.dat'; outfile='bench/results/gc.png'" bench/gc.gp
if (!exists("datafile")) datafile = 'bench/results/gc.dat'
if (!exists("outfile")) outfile = 'bench/results/gc.png'

set terminal pngcairo size 1100,560 font ",10" noenhanced
set output outfile
set title "Minnow GC benchmarks: median wall time of the runs (lower is better)"
set ylabel "seconds (log scale)"
set logscale y
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
set key autotitle columnheader  # every plot below reads the header line as titles
# Bars of a cluster of 3 with gap 1 sit at x = row + (column - 3) / 4; each gets its value above it.
plot datafile using 2:xtic(1) linecolor rgb "#1f77b4", \
     ''       using 3 linecolor rgb "#ff7f0e", \
     ''       using 4 linecolor rgb "#2ca02c", \
     for [c=2:4] '' using ($0 + (c - 3) / 4.0):c:(sprintf("%.2f", column(c))) \
       with labels offset 0, 0.6 font ",8" notitle
