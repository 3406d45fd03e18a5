(* word_count: OCaml twin of bench/programs/word_count.mn (same algorithm, same output).
   Text built in a Buffer, cut by String.split_on_char, counted in a Hashtbl. *)

let p = 1000000007

let syl = [| "ka"; "lo"; "mi"; "nu"; "pe"; "ra"; "so"; "ti";
             "va"; "ze"; "bro"; "cha"; "dru"; "fle"; "gri"; "sha" |]

let arg_int k dflt =
  if Array.length Sys.argv <= k then dflt
  else match int_of_string_opt Sys.argv.(k) with Some v -> v | None -> dflt

(* The same linear congruential generator as the Minnow program. *)
let seed = ref 42
let rand bound =
  seed := (!seed * 1103515245 + 12345) mod 2147483648;
  (!seed / 65536) mod bound

let word_hash w =
  let h = ref 0 in
  String.iter (fun c -> h := (!h * 131 + Char.code c) mod p) w;
  !h

let () =
  let n = arg_int 1 200000 in
  let buf = Buffer.create 16 in
  for i = 0 to n - 1 do
    if i > 0 then Buffer.add_char buf ' ';
    let nsyl = 1 + rand 3 in
    for _ = 1 to nsyl do Buffer.add_string buf syl.(rand 16) done
  done;
  let text = Buffer.contents buf in
  let counts = Hashtbl.create 16 in
  let words = ref 0 in
  List.iter (fun w ->
      incr words;
      let c = match Hashtbl.find_opt counts w with None -> 1 | Some c -> c + 1 in
      Hashtbl.replace counts w c)
    (String.split_on_char ' ' text);
  let distinct, sum, best, best_n =
    Hashtbl.fold (fun w c (d, s, b, bn) ->
        let s = (s + word_hash w * c) mod p in
        if c > bn || (c = bn && String.compare w b < 0) then (d + 1, s, w, c) else (d + 1, s, b, bn))
      counts (0, 0, "", 0)
  in
  Printf.printf "words: %d distinct: %d\n" !words distinct;
  Printf.printf "most frequent: %s %d\n" best best_n;
  Printf.printf "checksum: %d\n" sum
