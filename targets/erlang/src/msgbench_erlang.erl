%% The erlang target's worker: its workloads and options on the Erlang kit
%% (kits/erlang, msgbench_worker). target.toml starts it with
%% `-s msgbench_erlang main`, the socket workload's server half with
%% `-s msgbench_erlang serve`.
-module(msgbench_erlang).

-export([main/0, serve/0, spec/0]).

-spec main() -> no_return().
main() -> msgbench_worker:main(spec()).

-spec serve() -> no_return().
serve() -> msgbench_worker:serve(spec()).

%% Chat samples the VM's view while it runs; the other workloads last too
%% short for a time series.
-spec spec() -> msgbench_worker:spec().
spec() ->
    #{target => <<"erlang">>,
      workloads => #{<<"ring">> => msgbench_ring_workload,
                     <<"fanin">> => msgbench_fanin_workload,
                     <<"chat">> => msgbench_chat_workload,
                     <<"socket">> => msgbench_socket_workload},
      options => msgbench_erlang_options,
      sampled => [<<"chat">>]}.
