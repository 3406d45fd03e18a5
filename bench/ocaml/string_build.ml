(* string_build: OCaml twin of bench/programs/string_build.mn (same algorithm, same output).
   Each line's pieces go into the Buffer one by one, as an OCaml programmer writes it
   (Minnow's program builds each line with ++ first); the 3,000-digit line is grown by
   ^, one digit at a time: that quadratic copying is the workload the program exists
   to measure, so it is kept. *)

let p = 1000000007

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

let () =
  let n = arg_int 1 20000 in
  let reps = arg_int 2 20 in
  let total = ref 0 in
  for r = 0 to reps - 1 do
    let b = Buffer.create 16 in
    for i = 0 to n - 1 do
      Buffer.add_string b "key";
      Buffer.add_string b (string_of_int i);
      Buffer.add_char b '=';
      Buffer.add_string b (string_of_int ((i * 7 + r) mod 1000));
      Buffer.add_char b ';'
    done;
    let text = Buffer.contents b in
    let line = ref "" in
    for j = 0 to 2999 do line := !line ^ string_of_int ((j + r) mod 10) done;
    let tl = String.length text and ll = String.length !line in
    total := (!total * 31 + tl + Char.code text.[tl / 2] + ll + Char.code !line.[r]) mod p
  done;
  Printf.printf "checksum: %d\n" !total
