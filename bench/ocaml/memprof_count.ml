(* memprof_count: the OCaml counterpart of ./vm --memprof-count R (memprof/counter.c),
   linked before every OCaml twin of bench/programs (bench/peers.mk).

   With BENCH_MEMPROF_COUNT=R in the environment, it starts Gc.Memprof at sampling
   rate R (per word, headers included, as the VM's) with no limit on the callstack
   (callstack_size max_int, as the VM's counting tracker keeps every frame), and a
   tracker that only counts: each sampled block is tracked (the alloc callbacks
   return Some) so that its promotion and deallocation are reported and counted,
   as the VM's tracker does. At exit it prints to stderr the VM's line:
     memprof: rate R: S samples in B blocks (estimated W words allocated),
       P promoted, Y freed young, O freed old, F frames per sample
   Without the variable, or with it empty, it does nothing; a value that is not a rate
   in (0, 1] is an error (exit 2). *)

type counts = {
  mutable blocks : int;
  mutable samples : int;
  mutable frames : int;  (* callstack slots seen *)
  mutable promoted : int;
  mutable freed_young : int;
  mutable freed_old : int;
}

let report rate c =
  Printf.eprintf
    "memprof: rate %g: %d samples in %d blocks (estimated %.0f words allocated), \
     %d promoted, %d freed young, %d freed old, %.1f frames per sample\n%!"
    rate c.samples c.blocks (float_of_int c.samples /. rate) c.promoted c.freed_young
    c.freed_old
    (if c.blocks = 0 then 0. else float_of_int c.frames /. float_of_int c.blocks)

let start rate =
  let c = { blocks = 0; samples = 0; frames = 0; promoted = 0; freed_young = 0; freed_old = 0 } in
  let alloc (info : Gc.Memprof.allocation) =
    c.blocks <- c.blocks + 1;
    c.samples <- c.samples + info.n_samples;
    c.frames <- c.frames + Printexc.raw_backtrace_length info.callstack;
    Some ()
  in
  let tracker =
    { Gc.Memprof.alloc_minor = alloc;
      alloc_major = alloc;
      promote = (fun () -> c.promoted <- c.promoted + 1; Some ());
      dealloc_minor = (fun () -> c.freed_young <- c.freed_young + 1);
      dealloc_major = (fun () -> c.freed_old <- c.freed_old + 1) }
  in
  at_exit (fun () -> report rate c);
  Gc.Memprof.start ~sampling_rate:rate ~callstack_size:max_int tracker

let () =
  match Sys.getenv_opt "BENCH_MEMPROF_COUNT" with
  | None | Some "" -> ()
  | Some s ->
    match float_of_string_opt s with
    | Some rate when rate > 0. && rate <= 1. -> start rate
    | _ -> Printf.eprintf "memprof_count: BENCH_MEMPROF_COUNT=%s is not a rate in (0, 1]\n%!" s; exit 2
