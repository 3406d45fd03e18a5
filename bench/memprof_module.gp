# memprof_module.gp: the Memprof module's cost on a 100,000-frame recursion
# (make bench-memprof-module): per rate, a callback that reads no frame over
# the profiler off, and a callback that reads every frame over the C counting
# tracker, in CPU time (paired medians) and in instructions (callgrind), with
# the floors (none/off 1.2 at 1e-4 and 1.5 at 1e-3; frames/count 1.5).
# Input: results/memprof_module.dat (bench/memprof_module.sh): a header line,
# then "rate v1 v2 v3 v4", "?" for a missing value.
if (!exists("datafile")) datafile = 'bench/results/memprof_module.dat'
if (!exists("outfile")) outfile = 'bench/results/memprof_module.png'
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 900,480 font ",10" noenhanced
} else {
  set terminal png size 900,480 noenhanced
}
set output outfile
set title "Memprof module on a 100,000-frame recursion: cost ratios (lower is better; dashed: the floors)"
set datafile missing "?"
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:*]
set ylabel "ratio"
set grid ytics
set key outside top center horizontal
set key autotitle columnheader
set arrow 1 from graph 0, first 1.2 to graph 1, first 1.2 nohead dt 2 lc rgb "#555555"
set arrow 2 from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 2 lc rgb "#d62728"
colors = "#1f77b4 #ff7f0e #aec7e8 #ffbb78"
plot for [c=2:5] datafile using c:xtic(1) linecolor rgb word(colors, c - 1), \
     for [c=2:5] '' using ($0 + (c - 2 - 1.5) / 5.0):c:(sprintf("%.2f", column(c))) with labels offset 0, 0.6 font ",8" notitle
