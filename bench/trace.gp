# trace.gp - bench/results/trace.png from trace.dat (bench/trace_bench.sh):
# bytes per sample on a log scale, one row per method (memtrace, perf without
# call graph, with --call-graph=fp, with --call-graph=dwarf); one point per
# program and rate: colour = program, shape = rate (perf: the rate its
# frequency was matched to). The band marks memtrace's own 15-35 B at 1e-4.
# Call: gnuplot -e "datafile='...'; outfile='...'; programs='a b c'; rates='1e-6 1e-5'" trace.gp
# trace.dat columns: row program_index rate_index bytes_per_sample method program rate

set terminal pngcairo size 960,480 font ",10"
set output outfile
set title "Trace bytes per sample (file size / samples): ./vm --memtrace against perf record"
set logscale x 10
set xlabel "bytes per sample (log scale)"
set xrange [5:50000]
set yrange [4.6:0.4]
set ytics noenhanced ("memtrace" 1, "perf, no call graph" 2, "perf --call-graph=fp" 3, "perf --call-graph=dwarf" 4)
set grid xtics mxtics
set key outside right top vertical noenhanced
set object 1 rectangle from 15, graph 0 to 35, graph 1 fillcolor rgb "#e8f0e0" fillstyle solid 1.0 noborder behind
set label 1 "memtrace (OCaml)\n15-35 B at 1e-4" at 16, 1.55 font ",8" textcolor rgb "#507040"

np = words(programs)
nr = words(rates)
colors = "#1b9e77 #d95f02 #7570b3 #e7298a #66a61e #e6ab02 #a6761d #666666"
shapes = "7 5 9 13 11 15"
color(i) = word(colors, int(i - 1) % 8 + 1)
# Programs spread vertically inside their method's row.
y(row, p) = row + (p - (np + 1) / 2.0) * 0.12

plot for [p = 1:np] for [r = 1:nr] datafile \
       using ($2 == p && $3 == r ? $4 : NaN):(y($1, $2)) with points \
       pt (word(shapes, r) + 0) ps 1.3 lc rgb color(p) notitle, \
     for [p = 1:np] NaN with points pt 7 ps 1.3 lc rgb color(p) title word(programs, p), \
     for [r = 1:nr] NaN with points pt (word(shapes, r) + 0) ps 1.3 lc rgb "black" title "rate ".word(rates, r)
