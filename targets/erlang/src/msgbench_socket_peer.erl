%% The server half as seen from the worker: started from the command the
%% harness gives (MSGBENCH_PEER_COMMAND, _CWD, _HOST; spec/README.md,
%% "Peers") as a port, the request written to its stdin (kept open), its
%% stdout read line by line. Closing the port closes the server's stdin,
%% which makes it exit; a worker that dies closes it too.
-module(msgbench_socket_peer).

-export([config/1, start/2, next/3, explanation/2, finish/2, stop/1]).

-export_type([config/0, peer/0]).

-type config() :: #{argv := [string()], cwd := string() | none, host := string()}.
-opaque peer() :: #{port := port(), os_pid := integer() | undefined, argv := [string()]}.

-define(ENV_COMMAND, "MSGBENCH_PEER_COMMAND").
-define(ENV_CWD, "MSGBENCH_PEER_CWD").
-define(ENV_HOST, "MSGBENCH_PEER_HOST").
-define(LOCALHOST, "127.0.0.1").

%% How long stop/1 waits for the server to go after its stdin closed before
%% it is killed.
-define(EXIT_MS, 10000).

%% Where the server runs, from the environment. Without it (a worker run by
%% hand) the server is this VM's own erl with the serve entry point, on this
%% host; placement = remote then needs the harness.
-spec config(boolean()) -> {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
config(Remote) ->
    Host = case os:getenv(?ENV_HOST) of
               Value when is_list(Value), Value =/= "" -> Value;
               _ -> ?LOCALHOST
           end,
    Cwd = case os:getenv(?ENV_CWD) of
              Dir when is_list(Dir), Dir =/= "" -> Dir;
              _ -> none
          end,
    case os:getenv(?ENV_COMMAND) of
        Command when is_list(Command), Command =/= "" ->
            case msgbench_json:decode(unicode:characters_to_binary(Command)) of
                {ok, [First | _] = Argv} when First =/= <<>> ->
                    case lists:all(fun is_binary/1, Argv) of
                        true ->
                            {ok, #{argv => [unicode:characters_to_list(A) || A <- Argv],
                                   cwd => Cwd, host => Host}};
                        false ->
                            not_a_command(Command)
                    end;
                _ ->
                    not_a_command(Command)
            end;
        _ when Remote ->
            {error, unsupported,
             "placement = remote needs the harness to place the server (" ?ENV_COMMAND " and "
             ?ENV_HOST " are not set)"};
        _ ->
            {ok, #{argv => own_serve_argv(), cwd => none, host => ?LOCALHOST}}
    end.

not_a_command(Command) ->
    {error, internal, io_lib:format(?ENV_COMMAND " = ~ts is not a JSON array of strings naming a command",
                                    [Command])}.

%% target.toml's serve command, with this VM's process limit and
%% schedulers (a variant's +S 1 holds in the server too).
own_serve_argv() ->
    Ebin = filename:dirname(filename:absname(code:which(?MODULE))),
    [filename:join([code:root_dir(), "bin", "erl"]),
     "+P", integer_to_list(erlang:system_info(process_limit)),
     "+S", integer_to_list(erlang:system_info(schedulers_online)),
     "-noshell",
     "-kernel", "logger", "[{handler,default,logger_std_h,#{config=>#{type=>standard_error}}}]",
     "-env", "ERL_CRASH_DUMP_SECONDS", "0",
     "-pa", Ebin, "-s", "msgbench_erlang", "serve"].

%% Starts the server and writes Request (one JSON line) to its stdin. Its
%% stderr is the worker's.
-spec start(config(), iodata()) -> {ok, peer()} | {error, msgbench_worker:error_kind(), iodata()}.
start(#{argv := [Program | Args] = Argv, cwd := Cwd}, Request) ->
    Dir = case Cwd of
              none -> [];
              _ -> [{cd, Cwd}]
          end,
    Executable = case lists:member($/, Program) of
                     true -> filename:absname(Program, case Cwd of none -> "."; _ -> Cwd end);
                     false -> os:find_executable(Program)
                 end,
    case Executable of
        false ->
            {error, internal, io_lib:format("cannot start the server ~ts: ~ts is not on the PATH",
                                            [quote(Argv), Program])};
        _ ->
            try open_port({spawn_executable, Executable},
                          [{args, Args}, {line, 1 bsl 16}, binary, exit_status, use_stdio | Dir]) of
                Port ->
                    OsPid = case erlang:port_info(Port, os_pid) of
                                {os_pid, Pid} -> Pid;
                                undefined -> undefined
                            end,
                    %% A server that has already exited: its end of output,
                    %% with the exit status, says more than a failed write.
                    _ = catch port_command(Port, Request),
                    {ok, #{port => Port, os_pid => OsPid, argv => Argv}}
            catch
                error:Reason ->
                    {error, internal, io_lib:format("cannot start the server ~ts: ~0p",
                                                    [quote(Argv), Reason])}
            end
    end.

%% Waits up to Within ms for the server's next line, which must be of type
%% Want; an error line is relayed as the worker's own error.
-spec next(peer(), binary(), timeout()) ->
          {ok, map()} | {error, msgbench_worker:error_kind(), iodata()}.
next(#{port := Port, argv := Argv} = Peer, Want, Within) ->
    receive
        {Port, {data, {eol, Line}}} ->
            case msgbench_json:decode(Line) of
                {ok, #{<<"type">> := <<"error">>} = Error} ->
                    relay(Error);
                {ok, #{<<"type">> := Want} = Message} ->
                    {ok, Message};
                {ok, #{<<"type">> := Other}} ->
                    {error, internal, io_lib:format("the server said ~ts where ~ts was due", [Other, Want])};
                _ when Line =:= <<>> ->
                    next(Peer, Want, Within);
                _ ->
                    {error, internal,
                     io_lib:format("the server printed a line that is not a JSON object where ~ts was "
                                   "due: ~ts", [Want, brief(Line)])}
            end;
        {Port, {data, {noeol, _}}} ->
            {error, internal, io_lib:format("the server printed a line of over 64 KiB where ~ts was due",
                                            [Want])};
        {Port, {exit_status, Status}} ->
            {error, internal, io_lib:format("the server ~ts exited (status ~w) without saying ~ts",
                                            [quote(Argv), Status, Want])}
    after Within ->
        {error, internal, io_lib:format("the server ~ts did not say ~ts within ~w s",
                                        [quote(Argv), Want, Within div 1000])}
    end.

%% The server's error line, if one comes within Within ms: it says more than
%% a closed connection does.
-spec explanation(peer(), timeout()) -> {error, msgbench_worker:error_kind(), iodata()} | none.
explanation(#{port := Port} = Peer, Within) ->
    Deadline = erlang:monotonic_time(millisecond) + Within,
    receive
        {Port, {data, {eol, Line}}} ->
            case msgbench_json:decode(Line) of
                {ok, #{<<"type">> := <<"error">>} = Error} ->
                    relay(Error);
                _ ->
                    explanation(Peer, max(0, Deadline - erlang:monotonic_time(millisecond)))
            end;
        {Port, _} ->
            none
    after Within ->
        none
    end.

relay(#{<<"kind">> := Kind, <<"message">> := Message}) when is_binary(Message) ->
    Known = [<<"unsupported">>, <<"resource">>, <<"internal">>],
    Relayed = case lists:member(Kind, Known) of
                  true -> binary_to_existing_atom(Kind);
                  false -> internal
              end,
    {error, Relayed, ["the server: ", Message]};
relay(Line) ->
    {error, internal, ["the server printed an error line without a kind and a message: ",
                       brief(msgbench_json:encode(Line))]}.

%% A line the server printed, cut short when long.
brief(Text) ->
    case iolist_to_binary(Text) of
        <<Start:57/binary, _, _, _, _/binary>> -> <<Start/binary, "...">>;
        Short -> Short
    end.

%% Waits up to Within ms for the server to exit by itself after serving.
-spec finish(peer(), timeout()) -> ok | {error, msgbench_worker:error_kind(), iodata()}.
finish(#{port := Port, argv := Argv}, Within) ->
    receive
        {Port, {exit_status, 0}} ->
            ok;
        {Port, {exit_status, Status}} ->
            {error, internal, io_lib:format("the server ~ts ended badly after serving (status ~w)",
                                            [quote(Argv), Status])}
    after Within ->
        {error, internal, io_lib:format("the server ~ts did not exit within ~w s of serving",
                                        [quote(Argv), Within div 1000])}
    end.

%% Closes the server's stdin (the port), which makes it exit, and kills it
%% if it is still there EXIT_MS later.
-spec stop(peer()) -> ok.
stop(#{port := Port, os_pid := OsPid}) ->
    Exited = receive
                 {Port, {exit_status, _}} -> true
             after 0 -> false
             end,
    catch port_close(Port),
    case Exited orelse OsPid =:= undefined of
        true -> ok;
        false -> await_gone(OsPid, erlang:monotonic_time(millisecond) + ?EXIT_MS)
    end,
    flush(Port).

%% The port's child is reaped when it exits, so its /proc entry goes.
await_gone(OsPid, Deadline) ->
    Proc = "/proc/" ++ integer_to_list(OsPid),
    case filelib:is_dir(Proc) of
        false ->
            ok;
        true ->
            case erlang:monotonic_time(millisecond) >= Deadline of
                true ->
                    _ = os:cmd("kill -KILL " ++ integer_to_list(OsPid)),
                    ok;
                false ->
                    timer:sleep(10),
                    await_gone(OsPid, Deadline)
            end
    end.

flush(Port) ->
    receive
        {Port, _} -> flush(Port)
    after 0 -> ok
    end.

quote(Argv) ->
    msgbench_json:encode([unicode:characters_to_binary(A) || A <- Argv]).
