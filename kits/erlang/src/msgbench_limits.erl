%% Limits of the VM that a request may run into, checked before a
%% measurement starts so that the worker answers with a resource error
%% instead of failing halfway. (Parameter ranges are the harness's: it
%% checks them before any worker starts.)
-module(msgbench_limits).

-export([process_headroom/2]).

%% Needed more processes on top of those already running must fit under the
%% VM's process limit (+P). What says which params asked for them, and how.
-spec process_headroom(iodata(), pos_integer()) -> ok | {error, resource, iodata()}.
process_headroom(What, Needed) ->
    Limit = erlang:system_info(process_limit),
    Free = Limit - erlang:system_info(process_count),
    case Needed =< Free of
        true ->
            ok;
        false ->
            {error, resource,
             io_lib:format("~ts needs ~w processes but the VM has room for only ~w more "
                           "(process_limit ~w; start erl with a larger +P)",
                           [What, Needed, Free, Limit])}
    end.
