# gc.gp: grouped bars of the median wall time of each benchmark case per implementation.
# Input: the table bench/gc_bench.sh writes (header line, then "label" vm vm-boehm lua5.4,
# ? for a missing value). Run: gnuplot -e "datafile='bench/results/gc.dat'; outfile='bench/results/gc.png'" bench/gc.gp
if (!exists("datafile")) datafile = 'bench/results/gc.dat'
if (!exists("outfile")) outfile = 'bench/results/gc.png'

set terminal pngcairo size 1100,560 font ",10" noenhanced
set output outfile
set title "Minnow GC benchmarks: median wall time of the runs (lower is better)"
set ylabel "seconds"
set yrange [0:*]
set grid ytics
set key outside top center horizontal samplen 2 width 2
set bmargin 4
set offsets 0.3, 0.3, 0, 0
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror scale 0
set datafile missing "?"
plot datafile using 2:xtic(1) title columnheader(2) linecolor rgb "#1f77b4", \
     ''       using 3 title columnheader(3) linecolor rgb "#ff7f0e", \
     ''       using 4 title columnheader(4) linecolor rgb "#2ca02c"
