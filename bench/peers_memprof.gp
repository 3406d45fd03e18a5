# peers_memprof.gp: the profiler's overhead on each bench program, ./vm --memprof-count
# against OCaml's Gc.Memprof with the same counting tracker (make bench-peers): one panel
# per sampling rate, grouped bars per case, one bar per runtime; the bar is the median
# over the rounds of (CPU time at the rate / CPU time off in the same round). 1 = free.
# Input: results/peers_memprof.dat from bench/peers_bench.sh: one block per rate (blocks
# separated by two blank lines), each a header line (case, runtimes) and one row a case.
# Run: gnuplot -e "datafile='bench/results/peers_memprof.dat'; outfile='bench/results/peers_memprof.png'; \
#        nimpls=3; rates='1e-5 1e-4 1e-3'; ymax=20" bench/peers_memprof.gp
if (!exists("datafile")) datafile = 'bench/results/peers_memprof.dat'
if (!exists("outfile")) outfile = 'bench/results/peers_memprof.png'
if (!exists("nimpls")) nimpls = 3
if (!exists("rates")) rates = '1e-5 1e-4 1e-3'
if (!exists("ymax")) ymax = 20   # the same y range in every panel
nrates = words(rates)

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 600 * nrates, 560 font ",10" noenhanced
} else {
  set terminal png size 600 * nrates, 560 noenhanced
}
set output outfile
set multiplot layout 1, nrates title "memprof overhead: CPU time with a counting tracker / CPU time off (paired median; log scale, lower is better)"
set logscale y
set format y "%g"
set yrange [0.8:ymax]
set grid ytics mytics
set key top left samplen 2
set bmargin 5
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror scale 0 font ",8"
set datafile missing "?"
set key autotitle columnheader
colors = "#1f77b4 #9467bd #d62728"
do for [i=1:nrates] {
  set title "sampling rate " . word(rates, i) . " per word"
  plot for [c=2:nimpls+1] datafile index (i - 1) using c:xtic(1) linecolor rgb word(colors, c - 1), \
       for [c=2:nimpls+1] '' index (i - 1) using ($0 + (c - 2 - (nimpls - 1) / 2.0) / (nimpls + 1.0)):c:(sprintf("%.2f", column(c))) \
         with labels offset 0, 0.5 font ",7" notitle, \
       1 with lines dashtype 2 linecolor rgb "gray40" notitle
}
unset multiplot
