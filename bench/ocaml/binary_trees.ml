(* binary_trees: OCaml twin of bench/programs/binary_trees.mn (same algorithm, same output).
   Written as the benchmarks game's OCaml programs write it: a variant type whose
   leaf is a node with two empty children, so every node is one 2-field block, as
   Minnow's (nil, nil) and (left, right) tuples are. *)

type tree = Empty | Node of tree * tree

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let rec make d = if d = 0 then Node (Empty, Empty) else Node (make (d - 1), make (d - 1))

let rec check = function
  | Empty -> 0
  | Node (l, r) -> 1 + check l + check r

let () =
  let n = arg_int 1 16 in
  let min_depth = 4 in
  let max_depth = max (min_depth + 2) n in
  let total = ref 0 in
  let stretch = check (make (max_depth + 1)) in
  total := !total + stretch;
  Printf.printf "stretch tree of depth %d\t check: %d\n" (max_depth + 1) stretch;
  let long_lived = make max_depth in
  let d = ref min_depth in
  while !d <= max_depth do
    let iters = 1 lsl (max_depth - !d + min_depth) in
    let c = ref 0 in
    for _ = 1 to iters do c := !c + check (make !d) done;
    total := !total + !c;
    Printf.printf "%d\t trees of depth %d\t check: %d\n" iters !d !c;
    d := !d + 2
  done;
  let ll = check long_lived in
  total := !total + ll;
  Printf.printf "long lived tree of depth %d\t check: %d\n" max_depth ll;
  Printf.printf "checksum: %d\n" !total
