import statistics as st
data = [2, 4, 4, 4, 5, 5, 7, 9]
print(st.mean(data), st.median(data), st.mode(data))
print(st.pstdev(data), round(st.stdev(data), 6))
print(st.median_low([1, 3, 5, 7]), st.median_high([1, 3, 5, 7]))
print(round(st.variance([1.5, 2.5, 2.5, 2.75, 3.25, 4.75]), 6))
print(st.quantiles([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], n=4))
