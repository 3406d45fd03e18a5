(* empty: the program that does nothing, for bench-peers' start-up row (bench/peers_bench.sh). *)
