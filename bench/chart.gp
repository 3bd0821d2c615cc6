# Chart of workloads 2 and 5 of scripts/bench.  Called as
#   gnuplot -e "dir='RESULTS'; fill=1" bench/chart.gp
# dir holds w2.dat (a header row of function names, then clients and TPS per
# function) and, when fill=1, fill-GENERATOR.dat files (millions of rows in
# the table, rows/s of the batch, seconds since the start) for the generators
# listed in fill.txt.  Writes dir/bench-chart.png.

set terminal pngcairo size (fill ? 1400 : 700), 560 font "DejaVu Sans,11" noenhanced
set output dir."/bench-chart.png"
set grid
# Below the plot: per-batch rates swing too much for a corner to stay clear.
set key below horizontal
if (fill) { set multiplot layout 1, 2 }

# One colour per scheme in both panels (a sequence is nextval or bigserial).
colour(g) = g eq "idgen_next" ? "#E69F00" : g eq "gen_random_uuid" ? "#56B4E9" : \
	(g eq "nextval" || g eq "bigserial") ? "#009E73" : "#9400D3"

set title "2. pgbench SELECT f(): transactions per second"
set xlabel "clients"
set ylabel "TPS"
set logscale x 2
set xrange [0.8:10]
set xtics (1, 2, 4, 8)
set yrange [0:*]
header = system("head -1 ".dir."/w2.dat")
plot for [c = 2:words(header)] dir."/w2.dat" using 1:c with linespoints linewidth 2 \
	linecolor rgb colour(word(header, c)) title columnhead(c)

if (fill) {
	unset logscale x
	set xrange [0:*]
	set xtics autofreq
	set title "5. Inserts into a table outgrowing shared_buffers = 32MB"
	set xlabel "rows in the table (millions)"
	set ylabel "rows/s of each batch"
	gens = system("cat ".dir."/fill.txt")
	plot for [g in gens] dir."/fill-".g.".dat" using 1:2 with lines linewidth 2 \
		linecolor rgb colour(g) title g
	unset multiplot
}
