(* deep_map: OCaml twin of bench/programs/deep_map.mn (same algorithm, same output).
   List.map (not tail-recursive) builds nested tuples; each round's list lives one
   more round. *)

let p = 1000000007

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let () =
  let n = arg_int 1 10000 in
  let reps = arg_int 2 300 in
  let xs = List.init n (fun i -> i) in
  let prev = ref [] in
  let total = ref 0 in
  for k = 0 to reps - 1 do
    let ys = List.map (fun x -> (x, (x + k, x * 2))) xs in
    let s = List.fold_left (fun acc (a, (b, _)) -> (acc + a + b) mod p) 0 ys in
    let s = match !prev with [] -> s | (_, (b, _)) :: _ -> (s + b) mod p in
    total := (!total * 31 + s) mod p;
    prev := ys
  done;
  Printf.printf "checksum: %d\n" !total
