%% The process ring of seed 004 (Chris Whealy's ring_benchmark, after Joe
%% Armstrong's exercise), kept as close to the seed as the measurement
%% allows. Seed name -> name here:
%%
%%   start/2      run/3          the calling process is the root
%%   newLink/3    new_link/3     spawned with spawn/3 of an exported function
%%   passMsgOn/1  pass_msg_on/2  forwards whatever it receives
%%   lapCounter/1 lap_counter/3  the root, counting laps
%%
%% What differs, and why:
%% - connect carries how many links stand behind the sender, so the root
%%   learns how many processes joined the ring from the ring itself;
%% - every link keeps the number of messages it forwarded in its loop
%%   argument, and the root counts its own sends and laps;
%% - after the timed phases a stop token goes round once, adding up the
%%   links' counters; each link exits once it has passed it on, so the ring
%%   tears itself down;
%% - no io:format in the timed phases (the seed prints "Message round
%%   complete" before it reads the clocks), and clocks are read with
%%   monotonic_time (nanoseconds) rather than wall_clock (milliseconds),
%%   and reported raw: the harness derives hops/s and the rest.
%%
%% The payload is passed as given; msgbench_ring_workload makes it a literal,
%% as the seed's "BOO!" is, so that a hop copies only the tuple around it.
-module(msgbench_ring).

-export([run/3, new_link/3]).

-export_type([measurement/0]).

%% Times in ns: wall from the monotonic clock, CPU of the whole VM.
-type measurement() :: #{create_wall_ns := non_neg_integer(),
                         create_cpu_ns := non_neg_integer(),
                         pass_wall_ns := non_neg_integer(),
                         pass_cpu_ns := non_neg_integer(),
                         hops := non_neg_integer(),
                         laps := non_neg_integer(),
                         links := non_neg_integer()}.

%% Builds a ring of N processes (the caller being the root), sends the
%% token {M, Payload} round it M times and tears the ring down.
-spec run(pos_integer(), pos_integer(), term()) -> measurement().
run(N, M, Payload) when is_integer(N), N >= 2, is_integer(M), M >= 1 ->
    Root = self(),
    CreateCpu0 = msgbench_measure:cpu_ns(),
    CreateStart = msgbench_measure:now(),
    spawn(?MODULE, new_link, [N - 1, Root, Root]),
    receive
        {connect, NextLink, LinksBehind} ->
            CreateEnd = msgbench_measure:now(),
            CreateCpu1 = msgbench_measure:cpu_ns(),
            PassStart = msgbench_measure:now(),
            NextLink ! {M, Payload},
            {Laps, RootSends} = lap_counter(NextLink, 0, 1),
            PassEnd = msgbench_measure:now(),
            PassCpu1 = msgbench_measure:cpu_ns(),
            LinkHops = collect_hops(NextLink),
            Hops = LinkHops + RootSends,
            #{create_wall_ns => CreateEnd - CreateStart,
              create_cpu_ns => CreateCpu1 - CreateCpu0,
              pass_wall_ns => PassEnd - PassStart,
              pass_cpu_ns => PassCpu1 - CreateCpu1,
              hops => Hops,
              laps => Laps,
              links => LinksBehind + 1}      % the links behind the root, and the root
    end.

%% The last link: connect to its predecessor and close the ring on the root.
-spec new_link(pos_integer(), pid(), pid()) -> ok.
new_link(1, PrevLink, Main) ->
    PrevLink ! {connect, self(), 1},
    pass_msg_on(Main, 0);
%% Any other link: spawn the next one, wait until it has connected (which
%% happens only once the rest of the ring exists), then connect backwards.
new_link(N, PrevLink, Main) ->
    NextLink = spawn(?MODULE, new_link, [N - 1, self(), Main]),
    receive
        {connect, NextLink, LinksBehind} ->
            PrevLink ! {connect, self(), LinksBehind + 1},
            pass_msg_on(NextLink, 0)
    end.

%% Forward whatever arrives; only the stop token, which comes after the
%% timed phase, is looked at.
pass_msg_on(NextLink, Hops) ->
    receive
        {ring_stop, HopsSoFar} ->
            NextLink ! {ring_stop, HopsSoFar + Hops},
            ok;
        Msg ->
            NextLink ! Msg,
            pass_msg_on(NextLink, Hops + 1)
    end.

%% The root: the token comes back once per lap carrying the laps still to
%% go; on the last one ({1, _}) the passing is over.
lap_counter(NextLink, Laps, Sends) ->
    receive
        {1, _Payload} ->
            {Laps + 1, Sends};
        {LapsToGo, Payload} ->
            NextLink ! {LapsToGo - 1, Payload},
            lap_counter(NextLink, Laps + 1, Sends + 1)
    end.

%% One more round, untimed: the stop token sums every link's counter.
collect_hops(NextLink) ->
    NextLink ! {ring_stop, 0},
    receive
        {ring_stop, LinkHops} -> LinkHops
    end.
